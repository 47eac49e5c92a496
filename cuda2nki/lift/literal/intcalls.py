"""C's exact integer operations the literal lowering spells with the port's bit-operation helpers
(``templates/narrow_common.py.j2``): ``__mul24``/``__umul24`` and conversions to integer types
narrower than 32 bits.

Each works on every kind of per-thread value: a uniform value stays a Python integer, an index
known at trace time stays a trace-time array (both computed exactly in Python), and anything
else is an int32 tile on which only bit operations and the exact 32-bit helpers run.

A float converted to a narrow integer type follows the interpreter's (and PTX's ``cvt.rzi.sat``)
choice for what C leaves undefined: truncation toward zero, then saturation at the type's
limits (a NaN, which the interpreter turns into 0, is not modelled on tiles).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.ir.ops import DTYPE_BYTES
from cuda2nki.lift.literal.values import Idx, Lin, Tile, Uni, Value, is_int

if TYPE_CHECKING:
    from cuda2nki.lift.literal.lower import Lowerer

MUL24 = {"__mul24": True, "__umul24": False}  # name -> signed


def mul24(low: Lowerer, e: A.Call, args: list[Value]) -> Value:
    """``__mul24(a, b)`` (``__umul24``): the low 32 bits of the product of the operands' low 24
    bits, sign-extended for the signed form."""
    signed = MUL24[e.func]
    a, b = args
    if isinstance(a, Uni) and isinstance(b, Uni):
        if is_int(a.expr) and is_int(b.expr):
            return Uni(str(_mul24(int(a.expr), int(b.expr), signed)), "int")
        return Uni(f"_c2n_mul24({a.expr}, {b.expr}, {signed})", "int")
    if all(isinstance(v, Uni | Lin | Idx) for v in args):
        return Idx(f"_c2n_mul24({low.np_spell(a)}, {low.np_spell(b)}, {signed})")
    dst = low.fresh("n")
    x, y = (low.int_operand(v, e) for v in args)
    low.emit("let", dst=dst, value=f"_c2n_mul24({x}, {y}, {signed})")
    return Tile(dst, "int", unsigned=not signed)


def _mul24(a: int, b: int, signed: bool) -> int:
    return _wrap(_wrap(a, 24, signed) * _wrap(b, 24, signed), 32, signed)


def _wrap(x: int, bits: int, signed: bool) -> int:
    low = x & ((1 << bits) - 1)
    return (low ^ (1 << (bits - 1))) - (1 << (bits - 1)) if signed else low


def narrow_bits(to: A.ScalarType) -> tuple[int, bool] | None:
    """(bits, signed) of an integer type narrower than 32 bits, else None."""
    if to.is_float or to.name == "bool":
        return None
    bits = 8 * DTYPE_BYTES.get(to.name, 4)
    return (bits, not to.name.startswith("uint")) if bits < 32 else None


def narrow(low: Lowerer, v: Value, to: A.ScalarType, node: A.Node) -> Value:
    """An integer per-thread value converted to the narrow integer type ``to``: modulo 2**bits."""
    bits, signed = narrow_bits(to) or (32, True)
    if isinstance(v, Lin | Idx):
        return Idx(f"_c2n_wrap({low.np_spell(v)}, {bits}, {signed})")
    if isinstance(v, Tile) and v.ty == "bool":
        return low.op("copy", [v.expr], "int")  # 0 or 1 fits every integer type
    dst = low.fresh("n")
    low.emit("let", dst=dst, value=f"_c2n_wrap({low.tile(v, 'int', node)}, {bits}, {signed})")
    return Tile(dst, "int")


def float_to_narrow(low: Lowerer, v: Tile, to: A.ScalarType) -> Tile:
    """A float tile converted to the narrow integer type ``to``: truncated toward zero and
    saturated at the type's limits."""
    bits, signed = narrow_bits(to) or (32, True)
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    t = low.op("trunc", [v.expr], "float")
    t = low.op("maximum", [t.expr, f"{float(lo)}"], "float")
    t = low.op("minimum", [t.expr, f"{float(hi)}"], "float")
    return low.op("copy", [t.expr], "int")


def float_to_int_uniform(expr: str, to: A.ScalarType) -> str:
    """A uniform float converted to the integer type ``to``: truncated toward zero, and for a
    narrow type saturated at its limits as on the engines."""
    nb = narrow_bits(to)
    if nb is None:
        return f"int({expr})"
    bits, signed = nb
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return f"min(max(int({expr}), {lo}), {hi})"
