"""A host value passed for an integer parameter is converted as C converts it at the call:
``1024`` passed for a ``char`` is ``0``.  The kernel sees the converted value, so the binding
gives that one (a port takes the number as written)."""

from __future__ import annotations

_BITS = {"int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "int32": 32, "uint32": 32}


def wrapped(value: int, dtype: str) -> int:
    """``value`` converted to the integer type ``dtype`` (two's complement wraparound); other
    types unchanged."""
    bits = _BITS.get(dtype)
    if bits is None:
        return value
    v = value % (1 << bits)
    if not dtype.startswith("uint") and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v
