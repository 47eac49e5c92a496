"""Warp votes in the literal lowering: ``__ballot_sync``, ``__any_sync``, ``__all_sync``, their
pre-CUDA 9 forms without a mask (``__ballot``, ``__any``, ``__all``: the whole warp) and
``__activemask()``; and the lane masks ``__lanemask_lt()`` (``_le``, ``_eq``, ``_gt``, ``_ge``):
the bits of the lanes below (at or below, equal to, above, at or above) the thread's own.

A ballot is the bitwise or, over the 32 lanes of a warp, of ``1 << lane`` for each lane that is
active here (inside the branches and loops that reach the call, not returned) and whose predicate
is non-zero, and-ed with the mask: a butterfly of xor shuffles through the block's exchange
buffer on int32 tiles (bit operations only, so every bit is exact).  ``__any`` is a ballot that is
not zero; ``__all`` a ballot of the active lanes whose predicate is zero that is.  As in the SIMT
interpreter, the mask only selects lanes of the result; it does not wait for other lanes.

A block whose thread count is not a multiple of 32 has a partial last warp, whose missing lanes
the exchange buffer does not hold: such a block is refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.state import Scope
from cuda2nki.lift.literal.values import Tile, Uni, Value, is_int

if TYPE_CHECKING:
    from cuda2nki.lift.literal.lower import Lowerer

#: vote -> (kind, whether it takes a mask first)
VOTES = {
    "__ballot_sync": ("ballot", True), "__any_sync": ("any", True), "__all_sync": ("all", True),
    "__ballot": ("ballot", False), "__any": ("any", False), "__all": ("all", False),
    "__activemask": ("active", False),
}  # fmt: skip
LANE_MASKS = frozenset({"__lanemask_lt", "__lanemask_le", "__lanemask_eq", "__lanemask_gt",
                        "__lanemask_ge"})  # fmt: skip

_FULL = 0xFFFFFFFF


def is_active_mask(e: A.Expr) -> bool:
    """Whether ``e`` is a call to ``__activemask()`` (a mask whose lanes are the active ones)."""
    return isinstance(e, A.Call) and e.func == "__activemask" and not e.args


def vote(low: Lowerer, e: A.Call, scope: Scope) -> Value:
    """The value of the vote ``e`` (or lane mask) in each thread."""
    if e.func in LANE_MASKS:
        return _lane_mask(low, e)
    kind, masked = VOTES[e.func]
    want = (1 if masked else 0) + (0 if kind == "active" else 1)
    if len(e.args) != want:
        raise low.refuse(f"{e.func} with {len(e.args)} arguments", e)
    threads = low.block_dims[0] * low.block_dims[1] * low.block_dims[2]
    if threads % 32:
        raise low.refuse(f"{e.func} in a block of {threads} threads (a partial warp)", e)
    active = low.store_mask(scope)
    if kind == "active":
        return Uni(str(_FULL), "int") if active == "None" else _ballot(low, active, e)
    mask = _mask(low, e.args[0], scope) if masked else None
    pred = low.cond_tile(low.expr(e.args[-1], scope), e)
    if kind == "all":  # the active lanes whose predicate is zero
        pred = low.mask_not(pred)
    on = pred if active == "None" else low.op("multiply", [pred, active], "float").expr
    bits = _ballot(low, on, e)
    if mask is not None:
        bits = low.arith("&", bits, mask, A.ScalarType(name="uint32"), e)
    if kind == "ballot":
        return bits if isinstance(bits, Tile) and bits.unsigned else _unsigned(bits)
    cmp = "!=" if kind == "any" else "=="
    return low.arith(cmp, bits, Uni("0", "int"), A.ScalarType(name="int32"), e)


def _mask(low: Lowerer, arg: A.Expr, scope: Scope) -> Value | None:
    """The mask argument, or None where it selects every lane that can vote."""
    if is_active_mask(arg):
        return None
    m = low.expr(arg, scope)
    if isinstance(m, Uni) and is_int(m.expr) and int(m.expr) % 2**32 == _FULL:
        return None
    return m


def _ballot(low: Lowerer, on: str, e: A.Call) -> Tile:
    """The or over each warp of ``1 << lane`` where the 0/1 tile ``on`` is 1."""
    bit = _lane_bit(low, e)
    zero = low.full_tile(Uni("0", "int"), "int", e)
    dst = low.fresh("b")
    low.emit("where", e.loc.line, dst=dst, mask=on, a=bit, b=zero, dtype="nl.int32")
    v: Value = Tile(dst, "int")
    m = 16
    while m >= 1:
        other = low.shuffle_value("__shfl_xor_sync", v, Uni(str(m), "int"), 32, e)
        v = low.op("bitwise_or", [low.tile(v, "int", e), low.tile(other, "int", e)], "int")
        m //= 2
    return _unsigned(v)


def _lane_bit(low: Lowerer, e: A.Call) -> str:
    """An int32 tile of ``1 << lane`` (the thread's lane in its warp)."""
    lane = low.arith("%", low.linear_tid(), Uni("32", "int"), A.ScalarType(name="int32"), e)
    one = low.full_tile(Uni("1", "int"), "int", e)
    return low.op("left_shift", [one, low.tile(lane, "int", e)], "int").expr


def _lane_mask(low: Lowerer, e: A.Call) -> Value:
    if e.args:
        raise low.refuse(f"{e.func} with {len(e.args)} arguments", e)
    bit = _lane_bit(low, e)
    kind = e.func.removeprefix("__lanemask_")
    if kind == "eq":
        return Tile(bit, "int", unsigned=True)
    below = low.int_arith("-", Tile(bit, "int", unsigned=True), Uni("1", "int"), e).expr
    mask = below if kind in ("lt", "ge") else low.op("bitwise_or", [below, bit], "int").expr
    if kind in ("gt", "ge"):
        mask = low.op("invert", [mask], "int").expr
    return Tile(mask, "int", unsigned=True)


def _unsigned(v: Value) -> Value:
    return Tile(v.expr, "int", unsigned=True) if isinstance(v, Tile) else v


__all__ = ["LANE_MASKS", "VOTES", "is_active_mask", "vote"]
