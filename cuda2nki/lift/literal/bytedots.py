"""Byte dot products in the literal lowering: ``__dp4a(a, b, c)`` (``c`` plus the four products
of the bytes of ``a`` and ``b``) and ``__dp2a_lo`` / ``__dp2a_hi`` (``c`` plus the two products of
the 16-bit halves of ``a`` with the low or high two bytes of ``b``), signed for ``int``
operands and unsigned for ``unsigned int``, wrapping in 32 bits.

The fields are taken with shifts and masks on int32 tiles and sign-extended with an exclusive or
and a subtraction; each product is below 2**24 in magnitude (so the engines' fp32 arithmetic is
exact), and the products and ``c`` are added with the exact 32-bit integer helpers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.values import Tile, Value

if TYPE_CHECKING:
    from cuda2nki.lift.literal.lower import Lowerer

#: dot product -> ((shift in a, bits, shift in b) for each term), the byte width of b's fields
DOTS: dict[str, tuple[tuple[int, int, int], ...]] = {
    "__dp4a": tuple((8 * k, 8, 8 * k) for k in range(4)),
    "__dp2a_lo": ((0, 16, 0), (16, 16, 8)),
    "__dp2a_hi": ((0, 16, 16), (16, 16, 24)),
}


def byte_dot(low: Lowerer, e: A.Call, args: list[Value]) -> Value:
    """``e`` (one of :data:`DOTS`, three arguments) on per-thread or uniform values."""
    ty = e.ty
    unsigned = isinstance(ty, A.ScalarType) and ty.name.startswith("uint")
    a, b = (low.full_tile(v, "int", e) for v in args[:2])
    total: Value = args[2]
    for sa, bits, sb in DOTS[e.func]:
        x = _field(low, a, sa, bits, not unsigned)
        y = _field(low, b, sb, 8, not unsigned)
        term = Tile(low.op("multiply", [x, y], "int").expr, "int")
        total = low.int_arith("+", total, term, e)
    out = low.full_tile(total, "int", e)
    return Tile(out, "int", unsigned=unsigned)


def _field(low: Lowerer, t: str, shift: int, bits: int, signed: bool) -> str:
    """Bits ``shift .. shift + bits`` of the int32 tile ``t``, sign-extended if ``signed``."""
    v = low.op("right_shift", [t, str(shift)], "int").expr if shift else t
    v = low.op("bitwise_and", [v, str((1 << bits) - 1)], "int").expr
    if signed:
        half = str(1 << (bits - 1))
        v = low.op("subtract", [low.op("bitwise_xor", [v, half], "int").expr, half], "int").expr
    return v


__all__ = ["DOTS", "byte_dot"]
