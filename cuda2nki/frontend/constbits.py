"""Bit patterns given as constants, read as floating-point constants.

``__ushort_as_half((unsigned short)0x3c00U)`` is the half ``1.0``: a reinterpretation intrinsic
applied to an integer constant is the floating-point constant those bits spell, known when the
program is read (so a port needs no bit reinterpretation for it).  A pattern that spells an
infinity or a NaN is left as the call.
"""

from __future__ import annotations

import math

import numpy as np

from cuda2nki.frontend import ast as A

#: intrinsic -> (unsigned integer type holding the bits, result scalar type)
_BITS: dict[str, tuple[type, str]] = {
    "__ushort_as_half": (np.uint16, "float16"),
    "__short_as_half": (np.uint16, "float16"),
    "__ushort_as_bfloat16": (np.uint16, "bfloat16"),
    "__short_as_bfloat16": (np.uint16, "bfloat16"),
    "__int_as_float": (np.uint32, "float32"),
    "__uint_as_float": (np.uint32, "float32"),
}


def _int_constant(e: A.Expr) -> int | None:
    while isinstance(e, A.Cast) and isinstance(e.to, A.ScalarType) and not e.to.is_float:
        e = e.operand
    return e.value if isinstance(e, A.IntLit) else None


def _value(bits: int, holder: type, result: str) -> float:
    if result == "bfloat16":  # the high half of a float32
        return float(np.array([(bits & 0xFFFF) << 16], np.uint32).view(np.float32)[0])
    view = np.float16 if result == "float16" else np.float32
    return float(np.array([bits], np.uint64).astype(holder).view(view)[0])


def folded(e: A.Call) -> A.FloatLit | None:
    """``e`` as the floating-point constant its constant bits spell, else None."""
    got = _BITS.get(e.func)
    if got is None or e.target is not None or len(e.args) != 1:
        return None
    bits = _int_constant(e.args[0])
    if bits is None:
        return None
    value = _value(bits & 0xFFFFFFFF, *got)
    if not math.isfinite(value):
        return None
    return A.FloatLit(loc=e.loc, value=value, ty=A.ScalarType(name=got[1]))
