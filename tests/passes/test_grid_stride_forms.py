"""Helpers that let the row layouts take grid-stride reductions: a mask implied by a later
select's test is dropped (only when the shift is provably not negative), and a (warp, lane) pair
of nested reductions becomes one reduction over the thread index (only when every index uses
the pair as ``lane + 32 * warp``)."""

from __future__ import annotations

from cuda2nki.ir.nodes import Axis, Binary, Const, IndexValue, Lit, Read, Reduce, Select, Sym
from cuda2nki.ir.ops import AxisKind, Op
from cuda2nki.passes._implied import drop_implied_where
from cuda2nki.passes._merge_axes import merge_thread_axes

R = AxisKind.REDUCTION


def _ax(name: str, extent) -> Axis:
    return Axis(name, extent if not isinstance(extent, int) else Const(extent), R)


def _lt(e, n: str = "n"):
    return Binary(Op.LT, IndexValue(e), IndexValue(Sym(n)))


def _trip(shift) -> Reduce:
    """``reduce(add, k < 4: (A + shift < n ? x[A + shift] : 0) where A < n)``, A = j + 64 k."""
    a = Sym("j") + Const(64) * Sym("k")
    later = a + shift
    body = Select(_lt(later), Read("x", (later,)), Lit(0.0))
    return Reduce(Op.ADD, (_ax("k", 4),), body, where=_lt(a))


def test_a_later_position_inside_the_tensor_implies_the_trip_mask() -> None:
    for shift in (Const(32), Const(16) * Sym("g"), Const(8) * Sym("n") // Const(2)):
        assert drop_implied_where(_trip(shift), frozenset({"j"}), frozenset()).where is None


def test_a_shift_that_may_be_negative_keeps_the_mask() -> None:
    for shift, signed in ((Const(-1), frozenset()), (Sym("off"), frozenset({"off"}))):
        kept = drop_implied_where(_trip(shift), frozenset({"j"}), signed)
        assert kept.where is not None


def test_a_test_on_another_bound_keeps_the_mask() -> None:
    r = _trip(Const(32))
    other = r.body.replace(cond=_lt(Sym("j") + Const(64) * Sym("k") + Const(32), "m"))
    assert drop_implied_where(r.replace(body=other), frozenset({"j"}), frozenset()).where


def _pair(index) -> Reduce:
    inner = Reduce(Op.ADD, (_ax("l", 32),), Read("x", (index,)))
    return Reduce(Op.ADD, (_ax("w", 8),), inner)


def test_lane_plus_width_times_warp_is_one_thread_axis() -> None:
    i = Sym("i")
    got = merge_thread_axes(_pair(Sym("l") + Const(32) * Sym("w") + Const(256) * i))
    assert isinstance(got, Reduce) and len(got.axes) == 1
    assert got.axes[0].name == "l" and got.axes[0].extent == Const(256)
    assert not isinstance(got.body, Reduce)
    assert "w" not in got.body.index[0].free_syms()


def test_other_combinations_of_warp_and_lane_stay_nested() -> None:
    for index in (
        Sym("l") * Const(8) + Sym("w"),  # lane-major: not the thread index
        Sym("l") + Const(16) * Sym("w"),  # overlapping ranges
        Sym("w"),  # one coordinate only
    ):
        got = merge_thread_axes(_pair(index))
        assert isinstance(got.body, Reduce), index
