"""Vectorised scalar semantics of :class:`~cuda2nki.ir.ops.Op` on NumPy arrays (C/CUDA semantics).

Used by the IR evaluator for values, and (on float64 arrays) by the error-bound propagation.
"""

from __future__ import annotations

import math

import numpy as np

from cuda2nki.ir.ops import Op

_erf = np.frompyfunc(math.erf, 1, 1)


def erf(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    out = np.asarray(_erf(x.astype(np.float64)), dtype=np.float64)
    return out.astype(x.dtype if x.dtype.kind == "f" else np.float64, copy=False)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    z = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + z), z / (1 + z)).astype(x.dtype, copy=False)


def _is_int(x: np.ndarray) -> bool:
    return np.issubdtype(np.asarray(x).dtype, np.integer)


def c_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Division: true division on floats, C truncating division on integers (x/0 -> 0)."""
    if _is_int(a) and _is_int(b):
        safe = np.where(b == 0, 1, b)
        q = np.abs(a) // np.abs(safe)
        q = np.where((a < 0) != (safe < 0), -q, q)
        return np.where(b == 0, 0, q).astype(np.result_type(a, b), copy=False)
    return np.true_divide(a, b)


def c_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C remainder (sign of the dividend); ``fmod`` on floats; x%0 -> 0 on integers."""
    if _is_int(a) and _is_int(b):
        safe = np.where(b == 0, 1, b)
        return np.where(b == 0, 0, np.fmod(a, safe)).astype(np.result_type(a, b), copy=False)
    return np.fmod(a, b)


def c_round(x: np.ndarray) -> np.ndarray:
    """C ``roundf``: halfway cases away from zero."""
    return (np.sign(x) * np.floor(np.abs(x) + 0.5)).astype(x.dtype, copy=False)


def _gelu(x):
    return (0.5 * x * (1 + erf(x / np.sqrt(2.0).astype(x.dtype)))).astype(x.dtype, copy=False)


def _gelu_tanh(x):
    c = np.asarray(math.sqrt(2 / math.pi), x.dtype)
    return (0.5 * x * (1 + np.tanh(c * (x + np.asarray(0.044715, x.dtype) * x * x * x)))).astype(
        x.dtype, copy=False
    )


def _recip(x):
    if _is_int(x):
        return c_div(np.ones_like(x), x)
    return 1 / x


UNARY = {
    Op.NEG: np.negative,
    Op.ABS: np.abs,
    Op.SIGN: np.sign,
    Op.EXP: np.exp,
    Op.EXP2: np.exp2,
    Op.LOG: np.log,
    Op.LOG2: np.log2,
    Op.LOG1P: np.log1p,
    Op.EXPM1: np.expm1,
    Op.SQRT: np.sqrt,
    Op.RSQRT: lambda x: 1 / np.sqrt(x),
    Op.RECIPROCAL: _recip,
    Op.SQUARE: lambda x: x * x,
    Op.SIN: np.sin,
    Op.COS: np.cos,
    Op.TAN: np.tan,
    Op.ATAN: np.arctan,
    Op.TANH: np.tanh,
    Op.SIGMOID: _sigmoid,
    Op.RELU: lambda x: np.maximum(x, np.zeros((), x.dtype)),
    Op.GELU: _gelu,
    Op.GELU_TANH: _gelu_tanh,
    Op.SILU: lambda x: x * _sigmoid(x),
    Op.ERF: erf,
    Op.FLOOR: lambda x: x if _is_int(x) else np.floor(x),
    Op.CEIL: lambda x: x if _is_int(x) else np.ceil(x),
    Op.TRUNC: lambda x: x if _is_int(x) else np.trunc(x),
    Op.ROUND: lambda x: x if _is_int(x) else c_round(x),
    Op.RINT: lambda x: x if _is_int(x) else np.rint(x),
    Op.LNOT: lambda x: np.logical_not(x),
    Op.BITNOT: np.invert,
    Op.COPY: lambda x: x,
}

BINARY = {
    Op.ADD: np.add,
    Op.SUB: np.subtract,
    Op.MUL: np.multiply,
    Op.DIV: c_div,
    Op.MOD: c_mod,
    Op.POW: np.power,
    Op.MAX: np.maximum,
    Op.MIN: np.minimum,
    Op.ATAN2: np.arctan2,
    Op.EQ: np.equal,
    Op.NE: np.not_equal,
    Op.LT: np.less,
    Op.LE: np.less_equal,
    Op.GT: np.greater,
    Op.GE: np.greater_equal,
    Op.LAND: lambda a, b: np.logical_and(a, b),
    Op.LOR: lambda a, b: np.logical_or(a, b),
    Op.BITAND: np.bitwise_and,
    Op.BITOR: np.bitwise_or,
    Op.BITXOR: np.bitwise_xor,
    Op.SHL: np.left_shift,
    Op.SHR: np.right_shift,
}

#: ufunc used to combine values for reductions, scans and accumulating writes
COMBINE = {
    Op.ADD: np.add,
    Op.MUL: np.multiply,
    Op.MAX: np.maximum,
    Op.MIN: np.minimum,
    Op.LAND: np.logical_and,
    Op.LOR: np.logical_or,
    Op.BITAND: np.bitwise_and,
    Op.BITOR: np.bitwise_or,
    Op.BITXOR: np.bitwise_xor,
}


def identity(op: Op, dtype: np.dtype) -> object:
    """The identity of a combiner in ``dtype`` (max/min use the dtype's extreme for integers)."""
    dtype = np.dtype(dtype)
    if op in (Op.MAX, Op.MIN) and np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return info.min if op is Op.MAX else info.max
    if op in (Op.MAX, Op.MIN) and dtype == np.bool_:
        return op is Op.MIN
    return np.asarray(op.info.identity).astype(dtype)


def c_int32(op: Op, a: np.ndarray, b: np.ndarray, unsigned: bool) -> np.ndarray:
    """C's 32-bit ``a op b`` on int64 arrays of values (any representative modulo 2**32):
    wrapped int64 values for arithmetic, float32 0/1 for comparisons."""

    def canon(x: np.ndarray) -> np.ndarray:
        u = np.asarray(x, np.int64) & 0xFFFFFFFF
        return u if unsigned else u - ((u >> 31) << 32)

    a, b = canon(a), canon(b)
    if op.info.kind == "compare":
        return BINARY[op](a, b).astype(np.float32)
    if op == Op.SHR:
        r = a >> (b & 31)
    elif op == Op.SHL:
        r = a << (b & 31)
    elif op == Op.MUL:
        r = ((a.astype(np.uint64) * b.astype(np.uint64)) & 0xFFFFFFFF).astype(np.int64)
    else:
        r = BINARY[op](a, b)
    return canon(r)
