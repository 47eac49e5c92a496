"""CUDA's 32-bit integer intrinsics the literal lowering computes exactly: ``umin``/``umax``
(minimum and maximum of unsigned values) and the bit counts ``__popc`` (set bits), ``__ffs``
(position of the lowest set bit, from 1; 0 for 0), ``__clz`` (leading zeros) and ``__brev``
(bits reversed).

A uniform operand stays a Python integer and an index known at trace time a trace-time array
(both computed exactly in Python, on the value modulo 2**32).  On an int32 tile (a 32-bit
pattern) only operations the engines compute exactly are used: bit operations, logical shifts,
and sums and differences of 16-bit halves (values below 2**24).  ``umin``/``umax`` select with a
bit-exact unsigned comparison.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.values import Idx, Lin, Tile, Uni, Value, is_int

if TYPE_CHECKING:
    from cuda2nki.lift.literal.lower import Lowerer

UMINMAX = frozenset({"umin", "umax"})
BIT_COUNTS = frozenset({"__popc", "__ffs", "__clz", "__brev"})
_U32 = "4294967296"


def unsigned_minmax(low: Lowerer, e: A.Call, args: list[Value]) -> Tile:
    """``umin(a, b)`` / ``umax(a, b)`` of per-thread values, compared as unsigned 32-bit."""
    a, b = args
    less = low.int_arith("<", a, b, e)  # the call's type is unsigned: an unsigned comparison
    first, second = (a, b) if e.func == "umin" else (b, a)
    ta, tb = low.full_tile(first, "int", e), low.full_tile(second, "int", e)
    dst = low.fresh("s")
    low.emit("where", e.loc.line, dst=dst, mask=less.expr, a=ta, b=tb, dtype="nl.int32")
    return Tile(dst, "int", unsigned=True)


def bit_count(low: Lowerer, e: A.Call, v: Value) -> Value:
    """``__popc``, ``__ffs``, ``__clz`` or ``__brev`` of ``v``."""
    if isinstance(v, Uni):
        if is_int(v.expr):
            return Uni(str(_exact(e.func, int(v.expr))), "int")
        return Uni(_traced(e.func, v.expr), "int")
    if isinstance(v, Lin | Idx):
        return Idx(_traced(e.func, low.np_spell(v)))
    t = low.int_operand(v, e)
    if e.func == "__popc":
        return _popc(low, t)
    if e.func == "__ffs":
        below = low.int_arith("-", v, Uni("1", "int"), e).expr  # the lowest set bit and below
        ones = _popc(low, low.op("bitwise_xor", [t, below], "int").expr)
        nonzero = low.op("not_equal", [t, "0"], "int").expr
        return low.op("multiply", [ones.expr, nonzero], "int")
    if e.func == "__clz":
        smeared = t  # every bit below the highest set bit set
        for s in (1, 2, 4, 8, 16):
            shifted = low.op("right_shift", [smeared, str(s)], "int").expr
            smeared = low.op("bitwise_or", [smeared, shifted], "int").expr
        return low.op("subtract", ["32", _popc(low, smeared).expr], "int")
    return _brev(low, t)


def popc_tile(low: Lowerer, t: str) -> Tile:
    """The set bits of the int32 tile ``t``."""
    return _popc(low, t)


def _popc(low: Lowerer, t: str) -> Tile:
    """The set bits of the int32 tile ``t``, counted in its 16-bit halves."""
    total: str | None = None
    for shift in (0, 16):
        h = low.op("right_shift", [t, str(shift)], "int").expr if shift else t
        h = low.op("bitwise_and", [h, "65535"], "int").expr
        pairs = low.op("bitwise_and", [low.op("right_shift", [h, "1"], "int").expr, "21845"], "int")
        h = low.op("subtract", [h, pairs.expr], "int").expr
        low2 = low.op("bitwise_and", [h, "13107"], "int").expr
        high2 = low.op("bitwise_and", [low.op("right_shift", [h, "2"], "int").expr, "13107"], "int")
        h = low.op("add", [low2, high2.expr], "int").expr
        h = low.op("add", [h, low.op("right_shift", [h, "4"], "int").expr], "int").expr
        h = low.op("bitwise_and", [h, "3855"], "int").expr
        h = low.op("add", [h, low.op("right_shift", [h, "8"], "int").expr], "int").expr
        h = low.op("bitwise_and", [h, "31"], "int").expr
        total = h if total is None else low.op("add", [total, h], "int").expr
    return Tile(total or t, "int")


def _brev(low: Lowerer, t: str) -> Tile:
    """The bits of the int32 tile ``t`` reversed: neighbours swapped at widths 1, 2, 4, 8, 16."""
    v = t
    for width, mask in ((1, 0x55555555), (2, 0x33333333), (4, 0x0F0F0F0F), (8, 0x00FF00FF)):
        down = low.op("right_shift", [v, str(width)], "int").expr
        down = low.op("bitwise_and", [down, str(mask)], "int").expr
        up = low.op("bitwise_and", [v, str(mask)], "int").expr
        up = low.op("left_shift", [up, str(width)], "int").expr
        v = low.op("bitwise_or", [down, up], "int").expr
    down = low.op("bitwise_and", [low.op("right_shift", [v, "16"], "int").expr, "65535"], "int")
    up = low.op("left_shift", [v, "16"], "int").expr
    return Tile(low.op("bitwise_or", [down.expr, up], "int").expr, "int", unsigned=True)


def _exact(f: str, x: int) -> int:
    u = x % 2**32
    if f == "__popc":
        return bin(u).count("1")
    if f == "__ffs":
        return (u & -u).bit_length()
    if f == "__clz":
        return 32 - u.bit_length()
    return int(f"{u:032b}"[::-1], 2)


def _traced(f: str, x: str) -> str:
    """``f`` of the trace-time integer (or integer array) spelled ``x``, as Python."""
    u = f"(({x}) % {_U32})"
    bits = f"((({u}) >> _k) & 1 for _k in range(32))"
    if f == "__popc":
        return f"sum({bits})"
    if f == "__ffs":  # the bits up to the lowest set one, none for 0
        low_run = f"((({u}) ^ (({u}) - 1)) % {_U32})"
        return f"(sum(((({low_run}) >> _k) & 1 for _k in range(32))) * (({u}) != 0))"
    if f == "__clz":  # the shifts that leave nothing
        return f"sum(((({u}) >> _k) == 0) * 1 for _k in range(32))"
    return f"sum(((({u}) >> _k) & 1) << (31 - _k) for _k in range(32))"
