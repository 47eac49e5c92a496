"""Bit reinterpretations in the symbolic execution.

CUDA reads the bits of a value as another type of the same width in several spellings:

* the intrinsics ``__float_as_int``, ``__float_as_uint``, ``__int_as_float``, ``__uint_as_float``;
* ``reinterpret_cast<unsigned&>(f)`` (a scalar ``Cast`` of kind ``reinterpret``);
* a buffer read or written through a pointer of another element type
  (``const unsigned* bits = (const unsigned*)x``; ``int* idx = (int*)&pool[64]`` in a float
  shared buffer);
* ``*(int*)&f`` of a local.

Each becomes a :class:`~cuda2nki.lift.values.Bitcast`: a retyped pointer keeps its buffer's
own element type and remembers the type it is read through (``PtrVal.seen_as``), so a load is
the bitcast of the buffer's element and a store writes the bitcast of the value; bits stored
through one view and read back through the other are the value itself again
(:func:`~cuda2nki.lift.values.bitcast`).  Types of different widths are refused.
"""

from __future__ import annotations

import dataclasses

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.ir.bitcast import same_width
from cuda2nki.lift import values as V
from cuda2nki.lift.symbase import PtrVal, Refusal

#: intrinsic -> (operand type, result type)
BITCAST_CALLS: dict[str, tuple[str, str]] = {
    "__float_as_int": ("float32", "int32"),
    "__float_as_uint": ("float32", "uint32"),
    "__int_as_float": ("int32", "float32"),
    "__uint_as_float": ("uint32", "float32"),
}


def checked(source: str, target: str, loc: SourceLoc) -> None:
    """Refuse a reinterpretation between types of different widths."""
    if not same_width(source, target):
        raise Refusal(
            "C2N2010", loc, what=f"the bytes of a '{source}' read as a '{target}' (another size)"
        )


def bits_of(value: V.DExpr, target: str, loc: SourceLoc) -> V.DExpr:
    """The bits of ``value`` read as ``target``."""
    checked(value.dtype, target, loc)
    return V.bitcast(target, value)


def viewed(p: PtrVal, target: str, loc: SourceLoc) -> PtrVal:
    """``p`` cast to a pointer to ``target`` scalars: the same buffer read through another type
    (or through its own again)."""
    if p.width != 1:
        raise Refusal("C2N2010", loc, what="a vector buffer read as another element type")
    checked(p.dtype, target, loc)
    return dataclasses.replace(p, seen_as="" if target == p.dtype else target)


def loaded(p: PtrVal, value: V.DExpr) -> V.DExpr:
    """An element read through ``p``: the buffer's element, reinterpreted where ``p`` is a view."""
    return V.bitcast(p.seen_as, value) if p.seen_as else value


def stored(p: PtrVal, value: V.DExpr) -> V.DExpr:
    """What a store of ``value`` (of ``p``'s viewed type) writes into ``p``'s buffer."""
    return V.bitcast(p.dtype, value) if p.seen_as else value


__all__ = ["BITCAST_CALLS", "bits_of", "checked", "loaded", "stored", "viewed"]
