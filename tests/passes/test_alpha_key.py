"""``alpha_key``: reductions that differ only in the names of their bound axes share one tile
(the lowering's cache key), nested and shadowing reductions keep their own binding."""

from __future__ import annotations

from cuda2nki.ir.nodes import Axis, Binary, Read, Reduce, Sym
from cuda2nki.ir.ops import AxisKind, Op
from cuda2nki.passes._analysis import alpha_key


def _sum(axis: str, body) -> Reduce:
    return Reduce(Op.ADD, (Axis(axis, Sym("C"), AxisKind.REDUCTION),), body)


def _x(j: str) -> Read:
    return Read("x", (Sym("i"), Sym(j)))


def test_renamed_bound_axes_compare_equal() -> None:
    assert alpha_key(_sum("j", _x("j"))) == alpha_key(_sum("k", _x("k")))
    assert alpha_key(_sum("j", _x("j"))) != alpha_key(_sum("k", _x("j")))  # j free: differs


def test_nested_and_shadowing_reductions() -> None:
    def centred(a: str, b: str) -> Reduce:  # sum_a (x[i, a] - sum_b x[i, b])
        return _sum(a, Binary(Op.SUB, _x(a), _sum(b, _x(b))))

    assert alpha_key(centred("l", "m")) == alpha_key(centred("s", "a0"))
    # the inner reduction rebinds the outer name: its body still means its own axis
    assert alpha_key(centred("j", "j")) == alpha_key(centred("p", "q"))
