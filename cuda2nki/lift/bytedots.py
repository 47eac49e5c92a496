"""Byte dot products lifted as integer arithmetic: ``__dp4a(a, b, c)`` is ``c`` plus the sum of
the products of the four bytes of ``a`` and ``b``; ``__dp2a_lo(a, b, c)`` (``_hi``) is ``c``
plus the products of the two 16-bit halves of ``a`` with the low (high) two bytes of ``b``.
Fields are sign-extended for ``int`` operands, zero-extended for ``unsigned int``; the sum wraps
in 32 bits as the hardware's does::

    __dp4a(q, v, acc)  ->  acc + sext8(q & 255) * sext8(v & 255) + sext8(q >> 8 & 255) * ...
    sext8(x)           =   (x ^ 128) - 128          (of a value already masked to 8 bits)

Written out, a loop accumulating them is a contraction the recognisers claim (a quantised
matrix-vector product), its fields unpacked on the vector engine.  The vector overloads
(``char4``, ``short2``...) are left to the literal lowering.
"""

from __future__ import annotations

from collections.abc import Callable

from cuda2nki.frontend import ast as A
from cuda2nki.lift import values as V

#: intrinsic -> ((bits, shift) of a's field, (bits, shift) of b's field) per product term
TERMS: dict[str, tuple[tuple[tuple[int, int], tuple[int, int]], ...]] = {
    "__dp4a": tuple(((8, 8 * k), (8, 8 * k)) for k in range(4)),
    "__dp2a_lo": (((16, 0), (8, 0)), ((16, 16), (8, 8))),
    "__dp2a_hi": (((16, 0), (8, 16)), ((16, 16), (8, 24))),
}


def byte_dot(
    func: str, args: tuple[A.Expr, ...], data: Callable[[int, str], V.DExpr], dt: str
) -> V.DExpr | None:
    """The dot product ``func`` of the call's arguments as integer operations in ``dt`` (the
    call's type); ``data(k, dtype)`` is argument ``k`` as a value.  None: not a byte dot
    product of scalar integers."""
    terms = TERMS.get(func)
    if terms is None or len(args) != 3 or dt not in ("int32", "uint32"):
        return None
    if any(not isinstance(a.ty, A.ScalarType) or a.ty.is_float for a in args):
        return None  # the vector overloads, or a float argument
    signed = dt == "int32"
    a, b, acc = (data(k, dt) for k in range(3))
    out = acc
    for fa, fb in terms:
        prod = V.Op(dt, "mul", (_field(a, *fa, signed, dt), _field(b, *fb, signed, dt)))
        out = V.Op(dt, "add", (out, prod))
    return out


def _field(x: V.DExpr, bits: int, shift: int, signed: bool, dt: str) -> V.DExpr:
    """Bits ``shift .. shift + bits`` of ``x``, sign-extended when ``signed`` (the top field
    is the shift alone: arithmetic for ``int``, logical for ``unsigned``)."""
    if shift:
        x = V.Op(dt, "shr", (x, V.Const(dt, shift)))
    if shift + bits == 32:
        return x
    x = V.Op(dt, "bitand", (x, V.Const(dt, (1 << bits) - 1)))
    if signed:
        half = 1 << (bits - 1)
        x = V.Op(dt, "sub", (V.Op(dt, "bitxor", (x, V.Const(dt, half))), V.Const(dt, half)))
    return x
