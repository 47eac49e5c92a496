"""Whether a pointer cast reads a buffer's bytes as another element type.

``(const unsigned*)x`` over a float buffer reads each float's bits; a lifter that kept the
pointer's old element type would convert values instead (3.5f -> 3u) and compute something
else.  The intent lifter reads such a buffer through a bit reinterpretation
(:mod:`cuda2nki.lift.bitcasts`); the literal lowering reads the bits through a dtype view
(:mod:`cuda2nki.lift.literal.reinterpret`).
"""

from __future__ import annotations

from cuda2nki.frontend import ast as A

_NUMERIC = {
    "float16", "bfloat16", "float32", "float64",
    "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
}  # fmt: skip


def retyped(dtype: str, to: A.CType) -> bool:
    """Whether ``to`` (a pointer type) points at a numeric scalar type other than ``dtype``."""
    if not isinstance(to, A.PointerType) or not isinstance(to.pointee, A.ScalarType):
        return False
    new = to.pointee.name
    return dtype in _NUMERIC and new in _NUMERIC and new != dtype


__all__ = ["retyped"]
