"""CUDA's 64-bit bit intrinsics in the literal lowering: ``__clzll`` (leading zeros),
``__ffsll`` (position of the lowest set bit, from 1; 0 for 0) and ``__brevll`` (bits reversed)
of a 64-bit integer.

A uniform operand is computed exactly in Python (modulo 2**64).  A per-thread operand is a limb
pair (a 32-bit value is extended as its type says first) and each limb is counted by the exact
32-bit helpers of :mod:`.bitcalls`: the leading zeros are the high limb's where it is non-zero,
else 32 plus the low limb's; the lowest set bit is the low limb's where it is non-zero, else 32
plus the high limb's (0 where both are zero); the reversed bits swap the reversed limbs.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.bitcalls import bit_count
from cuda2nki.lift.literal.values import Lin, Tile, Uni, Value, is_int
from cuda2nki.lift.literal.wide import WIDE, is_wide

if TYPE_CHECKING:
    from cuda2nki.lift.literal.lower import Lowerer

WIDE_BIT_COUNTS = frozenset({"__clzll", "__ffsll", "__brevll"})
_M64 = 2**64


def wide_bit_count(low: Lowerer, e: A.Call, v: Value) -> Value:
    """``__clzll``, ``__ffsll`` or ``__brevll`` of ``v``."""
    if isinstance(v, Uni) and v.ty != "float":
        if is_int(v.expr):
            return Uni(str(_exact(e.func, int(v.expr))), "int")
        return Uni(_traced(e.func, f"(int({v.expr}) % {_M64})"), "int")
    if isinstance(v, Lin) and v.uniform:
        return wide_bit_count(low, e, Uni(v.b, "int"))
    signed = not (isinstance(v, Tile) and v.unsigned)
    pair = v.expr if is_wide(v) else low.wide_pair(low.wide_operand(v, signed, e), signed).expr  # type: ignore[union-attr]
    lo, hi = _limb(low, pair, 0), _limb(low, pair, 1)
    if e.func == "__brevll":
        rlo, rhi = _count(low, e, "__brev", lo), _count(low, e, "__brev", hi)
        dst = low.fresh("w")
        low.emit("let", e.loc.line, dst=dst, value=f"({rhi}, {rlo})")
        return Tile(dst, WIDE, unsigned=True)
    first, second = (hi, lo) if e.func == "__clzll" else (lo, hi)
    one = "__clz" if e.func == "__clzll" else "__ffs"
    near, far = _count(low, e, one, first), _count(low, e, one, second)
    if e.func == "__clzll":  # 32 + the low limb's where the high limb is zero
        far = low.op("add", [far, "32"], "int").expr
    else:  # 32 + the high limb's where that is non-zero, 0 where both are zero
        some = low.op("not_equal", [second, "0"], "int").expr
        far = low.op("add", [far, low.op("multiply", [some, "32"], "int").expr], "int").expr
    use_near = low.op("not_equal", [first, "0"], "float").expr
    dst = low.fresh("s")
    low.emit("where", e.loc.line, dst=dst, mask=use_near, a=near, b=far, dtype="nl.int32")
    return Tile(dst, "int")


def _limb(low: Lowerer, pair: str, k: int) -> str:
    name = low.fresh("lo" if k == 0 else "hi")
    low.emit("let", dst=name, value=f"{pair}[{k}]")
    return name


def _count(low: Lowerer, e: A.Call, func: str, limb: str) -> str:
    out = bit_count(low, dataclasses.replace(e, func=func), Tile(limb, "int", unsigned=True))
    return low.tile(out, "int", e)


def _exact(f: str, x: int) -> int:
    u = x % _M64
    if f == "__clzll":
        return 64 - u.bit_length()
    if f == "__ffsll":
        return (u & -u).bit_length()
    return int(f"{u:064b}"[::-1], 2)


def _traced(f: str, u: str) -> str:
    """``f`` of the trace-time integer spelled ``u`` (in [0, 2**64)), as Python."""
    if f == "__clzll":
        return f"(64 - {u}.bit_length())"
    if f == "__ffsll":
        return f"({u} & -{u}).bit_length()"
    return f"int(format({u}, '064b')[::-1], 2)"


__all__ = ["WIDE_BIT_COUNTS", "wide_bit_count"]
