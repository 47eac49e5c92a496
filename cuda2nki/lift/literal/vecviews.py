"""Pointers to vectors of one element type over buffers (or vectors) of another.

The scalarisation spells a pointer to vectors as a pointer to their lane 0
(:meth:`~cuda2nki.lift.literal.scalarise.Scalariser.sptr`), so a reinterpretation between
vector types of the same lane type (``(float2*)`` over ``float4*``, ``float4*`` over ``float*``)
is the same scalar pointer, addressed at the new width.  Lanes of another 32-bit type
(``int4*`` over a ``float`` buffer, ``uint2*`` over ``float2``) read the same words as that
type: a cast of the scalar pointer, which the lowering reads through a dtype view of the tensor
(:func:`~cuda2nki.lift.literal.reinterpret.word_view`).  Other element types (bytes, 16-bit
halves, 64-bit words) are refused: their lanes do not line up with the buffer's elements.
"""

from __future__ import annotations

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.state import LiteralRefusal

_WORDS = frozenset({"float32", "int32", "uint32"})


def retyped(ptr: A.Expr, src: A.ScalarType, dst: A.ScalarType, loc: SourceLoc) -> A.Expr:
    """The scalar pointer ``ptr`` to ``src`` elements read as one to ``dst`` elements."""
    if src.name == dst.name:
        return ptr
    if src.name not in _WORDS or dst.name not in _WORDS:
        raise LiteralRefusal("a reinterpretation as a vector of another element type", loc)
    to = A.PointerType(pointee=A.ScalarType(name=dst.name))
    return A.Cast(loc=loc, to=to, operand=ptr, kind="reinterpret", ty=to)


__all__ = ["retyped"]
