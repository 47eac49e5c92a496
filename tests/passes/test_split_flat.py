"""split-flat: a flat index taken apart by / and % becomes a row axis and a column axis when the
divisor divides the extent, so per-row and per-column reads broadcast; otherwise it stays."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.ir.evaluate import evaluate
from cuda2nki.ir.parser import parse
from cuda2nki.passes import PassContext, parse_pipeline, run_pipeline

HEAD = (
    "kernel k(x: in float32[R * C], rs: in float32[R], cs: in float32[C], "
    "y: out float32[R * C], R: int32, C: int32, n: int32) {\n"
)


def _kernel(stmt: str):
    return parse(HEAD + f"  map: {stmt};\n}}\n", "k.ir")


def _run(before):
    return run_pipeline(before, parse_pipeline("split-flat"), PassContext())


def _inputs(r: int, c: int):
    rng = np.random.default_rng(7)
    f = np.float32
    return {
        "x": rng.standard_normal(r * c).astype(f),
        "rs": rng.standard_normal(r).astype(f),
        "cs": rng.standard_normal(c).astype(f),
    }


SPLIT = [
    "y[i] = x[i] * rs[i // C] + cs[i % C] for i < R * C",
    "y[i] = x[i] - cs[i % C] for i < C * R",  # the divisor first in the product
    "y[t] = rs[t // C] for t < R * C",  # only the row
]


@pytest.mark.parametrize("stmt", SPLIT)
def test_flat_axis_splits_into_row_and_column(stmt: str) -> None:
    before = _kernel(stmt)
    after = _run(before)
    c = after.body[0]
    assert len(c.domain.axes) == 2
    assert "Mod(" not in repr(c.expr) and "FloorDiv(" not in repr(c.expr)
    scalars = {"R": 5, "C": 7, "n": 35}
    want = evaluate(before, _inputs(5, 7), scalars)["y"]
    got = evaluate(after, _inputs(5, 7), scalars)["y"]
    np.testing.assert_array_equal(got, want)


KEPT = [
    # the extent is not a multiple of the row length as written
    "y[i] = x[i] * cs[i % C] for i < n",
    # two divisors: no single row length
    "y[i] = rs[i // C] + cs[i % R] for i < R * C",
    # one row: the flat layout is as good
    "y[i] = x[i] * cs[i % C] for i < C",
    # no / or %: a plain elementwise map
    "y[i] = x[i] * 2.0 for i < R * C",
]


@pytest.mark.parametrize("stmt", KEPT)
def test_other_flat_axes_stay(stmt: str) -> None:
    before = _kernel(stmt)
    assert _run(before) == before


HEAD3 = (
    "kernel k(x: in float32[B * T * V], bt: in float32[B, T], v: in float32[V], "
    "y: out float32[B * T * V], B: int32, T: int32, V: int32) {\n"
)

CHAINED = [
    # a (B, T) tensor read at the row i / V of a flat (B, T, V) index, through its merged view
    "y[i] = x[i] * bt[i // (T * V), (i // V) % T] for i < B * T * V",
    "y[j] = bt[j // (T * V), (j // V) % T] + v[j % V] for j < B * T * V",
    "y[i] = x[i] - bt[i // (V * T), (i // V) % T] for i < T * V * B",  # another factor order
]


@pytest.mark.parametrize("stmt", CHAINED)
def test_chained_divisors_split_into_one_axis_per_dim(stmt: str) -> None:
    """Divisors that divide one another (``V`` and ``T*V``) split the axis by the smallest, then
    the row axis again: one axis per dim of the merged view, no ``/`` or ``%`` left."""
    before = parse(HEAD3 + f"  map: {stmt};\n}}\n", "k.ir")
    after = _run(before)
    c = after.body[0]
    assert len(c.domain.axes) == 3
    assert "Mod(" not in repr(c.expr) and "FloorDiv(" not in repr(c.expr)
    rng = np.random.default_rng(3)
    f = np.float32
    ins = {
        "x": rng.standard_normal(4 * 5 * 6).astype(f),
        "bt": rng.standard_normal((4, 5)).astype(f),
        "v": rng.standard_normal(6).astype(f),
    }
    scalars = {"B": 4, "T": 5, "V": 6}
    want = evaluate(before, ins, scalars)["y"]
    np.testing.assert_array_equal(evaluate(after, ins, scalars)["y"], want)


def test_a_flat_row_axis_beside_a_column_axis_splits() -> None:
    """A row axis over B*T beside a channel axis (one thread per row, a loop over channels):
    the row axis splits by T, the channel axis stays."""
    head = (
        "kernel k(tok: in float32[B, T], wpe: in float32[T, C], "
        "y: out float32[B * T, C], B: int32, T: int32, C: int32) {\n"
    )
    stmt = "y[n, c] = tok[n // T, n % T] + wpe[n % T, c] for n < B * T, c < C"
    before = parse(head + f"  map: {stmt};\n}}\n", "k.ir")
    after = _run(before)
    c = after.body[0]
    assert [a.name for a in c.domain.axes][-1] == "c"
    assert len(c.domain.axes) == 3
    assert "Mod(" not in repr(c.expr) and "FloorDiv(" not in repr(c.expr)
    rng = np.random.default_rng(5)
    f = np.float32
    ins = {
        "tok": rng.standard_normal((3, 4)).astype(f),
        "wpe": rng.standard_normal((4, 5)).astype(f),
    }
    scalars = {"B": 3, "T": 4, "C": 5}
    want = evaluate(before, ins, scalars)["y"]
    np.testing.assert_array_equal(evaluate(after, ins, scalars)["y"], want)
