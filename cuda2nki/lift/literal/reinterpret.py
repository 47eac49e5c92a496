"""A buffer read through a pointer of another element type of the same size.

Kernels reuse one shared (or global) buffer for values of another type: ``int* idx =
(int*)&scores[64]`` in a float buffer, ``float* acc = (float*)&s_mem[32]`` in an int one.  C
reads the same bytes with the new type.  Where both element types are 32-bit scalars, the port
does the same: the pointer becomes a dtype view of the tensor (``t.view(nl.int32)``, NKI's
zero-cost reinterpretation, NKI.md section 4), so the bits written through one type are the
bits read through the other.  Other sizes (a byte view of an int buffer, a vector view) are
refused (:func:`resized`): the lowering addresses whole elements.  Load reuse and hoisting see through the view: a write through it is a write of the
tensor (:func:`base_tensor`).
"""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.ir.ops import DTYPE_BYTES
from cuda2nki.lift.literal.spelling import dtype_spelling
from cuda2nki.lift.literal.values import Ptr

_WORD = ("float32", "int32", "uint32")
_VIEW = ".view("


def element_type(ty: A.CType | None) -> A.CType | None:
    """The element type a pointer or array expression designates."""
    if isinstance(ty, A.PointerType):
        return ty.pointee
    if isinstance(ty, A.ArrayType):
        return ty.elem
    return None


def word_view(ptr: Ptr, source: A.CType | None, to: A.ScalarType) -> Ptr | None:
    """``ptr`` read as elements of ``to`` where both element types are 32-bit scalars, else
    None."""
    src = element_type(source)
    if not isinstance(src, A.ScalarType) or src.name not in _WORD or to.name not in _WORD:
        return None
    klass = "float" if to.is_float else "int"
    tensor = f"{base_tensor(ptr.tensor)}{_VIEW}{dtype_spelling(to.name)})"
    return Ptr(tensor, ptr.off, klass, ptr.dims)


def resized(source: A.CType | None, to: A.ScalarType) -> bool:
    """Whether a pointer to ``to`` reads a buffer of scalars of another size (``(unsigned
    char*)`` over ints: four elements per word), which the lowering does not address."""
    src = element_type(source)
    if not isinstance(src, A.ScalarType) or src.name == "void" or to.name == "void":
        return False
    a, b = DTYPE_BYTES.get(src.name), DTYPE_BYTES.get(to.name)
    return a is not None and b is not None and a != b


def base_tensor(spelled: str) -> str:
    """The tensor a spelled tensor operand reads or writes: ``t`` for ``t.view(nl.int32)``."""
    return spelled.split(_VIEW, 1)[0]


__all__ = ["base_tensor", "element_type", "resized", "word_view"]
