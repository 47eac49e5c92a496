"""Dtypes of intent-layer expressions, and their NumPy counterparts.

Rules (the lifter makes C's own conversions explicit with :class:`~cuda2nki.ir.nodes.Cast`, so
these only decide what an operation on two already-typed operands yields):

* :class:`Read` -> the tensor's dtype; :class:`Lit`/:class:`IndexValue`/:class:`Cast` -> their own;
  :class:`Param` -> the scalar's declared dtype (``int32`` if the name is an axis variable).
* arithmetic ``Binary`` and ``Select`` -> :func:`promote` of the operands; comparisons and
  ``land``/``lor``/``lnot`` -> ``bool``; ``math`` unary ops (exp, sqrt, ...) on an integer ->
  ``float32``, otherwise the operand's dtype.
* :class:`Reduce`/:class:`Scan` -> ``acc_dtype`` if given, else the body's dtype.
* :class:`Carry` -> its own; :class:`Iterate` -> the dtype of its ``result`` variable.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from cuda2nki.dtypes import NUMPY_DTYPES
from cuda2nki.ir import nodes as n
from cuda2nki.ir.ops import DTYPE_BYTES, UNIT_ROUNDOFF, is_float, is_int

_FLOAT_RANK = {
    "float8_e4m3": 0,
    "float8_e5m2": 0,
    "bfloat16": 1,
    "float16": 1,
    "tfloat32": 2,
    "float32": 3,
    "float64": 4,
}


def np_dtype(dtype: str) -> np.dtype:
    return NUMPY_DTYPES[dtype]


def unit_roundoff(dtype: str) -> float:
    """u of a float dtype; 0 for integers and bool (exact)."""
    return UNIT_ROUNDOFF.get(dtype, 0.0)


def tiny(dtype: str) -> float:
    """Smallest positive normal number of a float dtype (0 for others)."""
    if not is_float(dtype):
        return 0.0
    if dtype in ("bfloat16", "float8_e4m3", "float8_e5m2"):
        import ml_dtypes

        return float(ml_dtypes.finfo(NUMPY_DTYPES[dtype]).tiny)
    return float(np.finfo(NUMPY_DTYPES[dtype]).tiny)


def promote(a: str, b: str) -> str:
    """The dtype of an arithmetic operation on ``a`` and ``b`` (C-like usual conversions)."""
    if a == b:
        return a
    if a == "bool":
        return b
    if b == "bool":
        return a
    fa, fb = is_float(a), is_float(b)
    if fa and fb:
        ra, rb = _FLOAT_RANK[a], _FLOAT_RANK[b]
        if ra == rb:  # bfloat16 with float16, or the two fp8 formats
            return "float32" if ra == 1 else "float16"
        return a if ra > rb else b
    if fa:
        return a
    if fb:
        return b
    # two integers: the wider; equal width signed/unsigned -> unsigned (C); < 32 bits -> int32
    wa, wb = DTYPE_BYTES[a], DTYPE_BYTES[b]
    if max(wa, wb) < 4:
        return "int32"
    if wa != wb:
        return a if wa > wb else b
    return a if a.startswith("u") else b


class TypeEnv:
    """Dtypes of a kernel's names: tensors, scalars; axis variables are ``int32``."""

    def __init__(self, kernel: n.Kernel) -> None:
        self.tensors: Mapping[str, n.TensorDecl] = kernel.tensors
        self.scalars: Mapping[str, n.ScalarDecl] = kernel.scalars

    def dtype_of(self, e: n.Expr) -> str:
        return dtype_of(e, self)


def dtype_of(e: n.Expr, env: TypeEnv) -> str:
    """The dtype of a value expression (rules in the module docstring)."""
    if isinstance(e, n.Read):
        t = env.tensors.get(e.tensor)
        return t.dtype if t is not None else "float32"
    if isinstance(e, (n.Lit, n.IndexValue, n.Cast, n.Bitcast)):
        return e.dtype
    if isinstance(e, n.Param):
        s = env.scalars.get(e.name)
        return s.dtype if s is not None else "int32"
    if isinstance(e, n.Unary):
        return unary_dtype(e.op, dtype_of(e.x, env))
    if isinstance(e, n.Binary):
        return binary_dtype(e.op, dtype_of(e.a, env), dtype_of(e.b, env))
    if isinstance(e, n.Select):
        return promote(dtype_of(e.a, env), dtype_of(e.b, env))
    if isinstance(e, (n.Reduce, n.Scan)):
        return e.acc_dtype or dtype_of(e.body, env)
    if isinstance(e, n.Carry):
        return e.dtype
    if isinstance(e, n.Iterate):
        return e.dtypes[e.names.index(e.result)] if e.result in e.names else "float32"
    raise TypeError(f"not a value expression: {type(e).__name__}")


def unary_dtype(op: n.Op, x: str) -> str:
    kind = op.info.kind
    if kind == "logical":
        return "bool"
    if kind == "math" and not is_float(x):
        return "float32"
    if kind == "bitwise" and x == "bool":
        return "int32"
    return x


def binary_dtype(op: n.Op, a: str, b: str) -> str:
    kind = op.info.kind
    if kind in ("compare", "logical"):
        return "bool"
    out = promote(a, b)
    if kind == "math" and not is_float(out):
        return "float32"
    if kind == "bitwise" and out == "bool":
        return "int32"
    if kind == "arith" and out == "bool" and op not in (n.Op.MAX, n.Op.MIN):
        return "int32"
    return out


__all__ = [
    "NUMPY_DTYPES",
    "TypeEnv",
    "binary_dtype",
    "dtype_of",
    "is_float",
    "is_int",
    "np_dtype",
    "promote",
    "tiny",
    "unary_dtype",
    "unit_roundoff",
]
