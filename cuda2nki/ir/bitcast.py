"""Bit reinterpretation (:class:`~cuda2nki.ir.nodes.Bitcast`): the meaning of the IR op.

``__float_as_int(x)``, ``__int_as_float(w)`` and a buffer read through a pointer of another
element type read the same bytes as another type of the same width.  A float held in higher
precision (the fp64 oracle) is first rounded to its own type, whose bits CUDA reads; the bits of
a value that may be off by any amount may be anything, so a bitcast of an inexact operand has an
unbounded error where its operand's error is not zero.
"""

from __future__ import annotations

import numpy as np

from cuda2nki.ir.ops import DTYPE_BYTES
from cuda2nki.ir.types import np_dtype


def same_width(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are types of the same size (a bitcast between them is defined)."""
    return a in DTYPE_BYTES and DTYPE_BYTES.get(a) == DTYPE_BYTES.get(b)


def bits_as(values: object, source: str, target: str) -> np.ndarray:
    """``values`` (of type ``source``, perhaps held wider) reinterpreted as ``target``."""
    held = np.ascontiguousarray(np.asarray(values).astype(np_dtype(source)))
    return held.view(np_dtype(target))


def bitcast_error(error: object, target: str) -> object:
    """The error bound of a bitcast whose operand has error ``error``: exact where the operand
    is, unbounded elsewhere."""
    e = np.asarray(error, np.float64)
    if not np.any(e):
        return 0.0
    return np.where(e > 0, np.inf, 0.0)


__all__ = ["same_width", "bits_as", "bitcast_error"]
