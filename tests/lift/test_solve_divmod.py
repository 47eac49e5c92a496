"""Which writer produced a shared element when a cooperative strided load writes the tile
through one flat counter (``tile[L / C][L % C]``)."""

from __future__ import annotations

from cuda2nki.lift import affine as af
from cuda2nki.lift.affine import Poly
from cuda2nki.lift.solve import solve_writer


def test_flat_counter_split_into_row_and_column_is_inverted() -> None:
    k, tx, ty = af.sym("w:k"), af.sym("w:tx"), af.sym("w:ty")
    flat = 256 * k + tx + 16 * ty
    unknowns = {"w:k": Poly.const(2), "w:tx": Poly.const(16), "w:ty": Poly.const(16)}
    rx, ry = af.sym("rx"), af.sym("ry")
    with af.bounds({**unknowns, "rx": 16, "ry": 16}):
        widx = (af.floordiv(flat, 18), af.mod(flat, 18))
        got = solve_writer(widx, (ry + 1, rx + 1), unknowns, af.TRUE)
        assert got is not None
        mapping, _ = got
        # the writer's counter is the reader's element in the flattened 18-wide tile
        assert flat.subs(mapping) == 18 * (ry + 1) + rx + 1


def test_constant_dims_are_left_alone() -> None:
    tx = af.sym("w:tx")
    with af.bounds({"w:tx": 32, "r": 32}):
        got = solve_writer((Poly.const(1), tx), (Poly.const(1), af.sym("r")), {"w:tx": 32}, af.TRUE)
    assert got is not None and got[0]["w:tx"] == af.sym("r")
