"""C scalar semantics on NumPy values: dtypes, conversions and arithmetic as CUDA defines them.

Values are NumPy scalars (``np.generic``, uniform across threads) or 1-D arrays (one element per
active thread) of the exact C dtype.  Every operation returns the C result type: ``float`` math
rounds to fp32 after every operation, ``int`` wraps modulo 2**32, ``/`` and ``%`` truncate toward
zero, shifts follow the PTX clamping rules, float -> int conversion truncates and saturates (NaN ->
0) as ``cvt.rzi.sat`` does.  ``half``/``bfloat16`` values are stored in their own dtype and their
arithmetic runs in fp32 (rounded back to the storage type on assignment).
"""

from __future__ import annotations

import numpy as np

from cuda2nki.dtypes import STANDARD_DTYPES
from cuda2nki.frontend.ast import CType, PointerType, ScalarType, VectorType
from cuda2nki.frontend.typesys import S, arith_result, promote, type_str

DTYPES = STANDARD_DTYPES
F32 = DTYPES["float32"]
BOOL = S["bool"]
INT = S["int32"]
HALF_NAMES = ("float16", "bfloat16")


class UnsupportedType(Exception):
    """A value of a C type the interpreter cannot represent (raised at compile time)."""


def np_dtype(t: CType | None) -> np.dtype:
    if isinstance(t, ScalarType) and t.name in DTYPES:
        return DTYPES[t.name]
    if isinstance(t, VectorType):
        return DTYPES[t.base.name]
    raise UnsupportedType(f"values of type {type_str(t)}")


def is_float(t: CType | None) -> bool:
    return isinstance(t, ScalarType) and t.is_float


def is_intlike(t: CType | None) -> bool:
    return isinstance(t, ScalarType) and not t.is_float and t.name != "void"


def scalar(value: int | float | bool, t: ScalarType) -> np.generic:
    """A NumPy scalar of C type ``t`` holding ``value`` (integers wrap)."""
    dt = DTYPES[t.name]
    if dt.kind in "iu":
        bits = dt.itemsize * 8
        v = int(value) & ((1 << bits) - 1)
        if dt.kind == "i" and v >= 1 << (bits - 1):
            v -= 1 << bits
        return dt.type(v)
    if dt.kind == "b":
        return np.bool_(bool(value))
    return np.asarray(float(value), dtype=np.float64).astype(dt)[()]


def compute_type(t: CType | None) -> ScalarType:
    """The type arithmetic on ``t`` is done in (half/bf16 -> float32, small ints -> int32)."""
    p = promote(t)
    if not isinstance(p, ScalarType):
        raise UnsupportedType(f"values of type {type_str(t)}")
    return p


def common_type(a: CType | None, b: CType | None) -> ScalarType:
    r = arith_result(a, b)
    if not isinstance(r, ScalarType):
        raise UnsupportedType(f"arithmetic on {type_str(a)} and {type_str(b)}")
    return r


# --------------------------------------------------------------------------- conversions

_INT_LIMITS: dict[str, tuple[float, float]] = {}
for _n, _dt in DTYPES.builtin_items():
    if _dt.kind in "iu":
        _ii = np.iinfo(_dt)
        _INT_LIMITS[_n] = (float(_ii.min), float(_ii.max))


def convert(v, src: CType | None, dst: CType | None):
    """C conversion of value ``v`` from type ``src`` to ``dst`` (scalar types)."""
    if not isinstance(dst, ScalarType) or dst.name == "void":
        return v
    if isinstance(src, ScalarType) and src.name == dst.name:
        return v
    dt = DTYPES[dst.name]
    if isinstance(v, np.ndarray | np.generic) and v.dtype == dt:
        return v
    if dt.kind == "b":
        return np.not_equal(v, 0)
    arr = v if isinstance(v, np.ndarray | np.generic) else np.asarray(v)
    if dt.kind in "iu" and arr.dtype.kind not in "iub":
        return _float_to_int(arr, dst.name)
    if dt.name == "bfloat16" and arr.dtype.kind in "iu":
        arr = arr.astype(np.float64)  # ml_dtypes has no direct integer -> bf16 cast
    out = arr.astype(dt)
    return out


def _float_to_int(x, name: str):
    """Truncate toward zero, saturate at the type's limits, NaN -> 0 (``cvt.rzi.sat``)."""
    lo, hi = _INT_LIMITS[name]
    dt = DTYPES[name]
    xf = np.asarray(x, dtype=np.float64) if x.dtype != np.float64 else x
    t = np.trunc(xf)
    t = np.where(np.isnan(t), 0.0, t)
    t = np.clip(t, lo, hi)
    if dt.itemsize == 8:
        # float64 cannot hold 2**63-1 / 2**64-1 exactly; clip produced the rounded-up limit.
        big = t >= 2.0 ** (63 if dt.kind == "i" else 64)
        out = t.astype(np.float64)
        res = np.where(big, 0, out).astype(dt)
        if np.any(big):
            res = np.where(big, np.iinfo(dt).max, res).astype(dt)
        return res if isinstance(x, np.ndarray) else res[()]
    res = t.astype(dt)
    return res if isinstance(x, np.ndarray) else dt.type(res)


def truthy(v):
    if isinstance(v, np.ndarray | np.generic):
        if v.dtype == np.bool_:
            return v
        return np.not_equal(v, 0)
    return bool(v)


# --------------------------------------------------------------------------- arithmetic

ARITH_OPS = ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>")
CMP_OPS = ("<", "<=", ">", ">=", "==", "!=")


class IntDivByZero(Exception):
    pass


def arith(op: str, a, b, ct: ScalarType):
    """``a op b`` with both operands already converted to the computation type ``ct``."""
    dt = DTYPES[ct.name]
    if dt.kind == "f":
        return _float_arith(op, a, b, dt)
    return _int_arith(op, a, b, dt)


def _float_arith(op: str, a, b, dt: np.dtype):
    if op == "+":
        return np.add(a, b, dtype=dt)
    if op == "-":
        return np.subtract(a, b, dtype=dt)
    if op == "*":
        return np.multiply(a, b, dtype=dt)
    if op == "/":
        return np.divide(a, b, dtype=dt)
    if op == "%":  # not valid C on floats; fmod semantics if a front end lets it through
        return np.fmod(a, b, dtype=dt)
    raise UnsupportedType(f"operator {op} on floating-point operands")


def _int_arith(op: str, a, b, dt: np.dtype):
    if op == "+":
        return np.add(a, b, dtype=dt)
    if op == "-":
        return np.subtract(a, b, dtype=dt)
    if op == "*":
        return np.multiply(a, b, dtype=dt)
    if op in ("/", "%"):
        if np.any(np.equal(b, 0)):
            raise IntDivByZero()
        if dt.kind == "u":
            return np.floor_divide(a, b, dtype=dt) if op == "/" else np.remainder(a, b, dtype=dt)
        if op == "%":
            return np.fmod(a, b, dtype=dt)
        # C truncation; INT_MIN / -1 wraps to INT_MIN (as the hardware does)
        a64 = np.asarray(a, dtype=np.int64) if dt.itemsize < 8 else a
        b64 = np.asarray(b, dtype=np.int64) if dt.itemsize < 8 else b
        q = np.floor_divide(a64, b64)
        fix = (np.not_equal(np.fmod(a64, b64), 0)) & (np.less(a64, 0) != np.less(b64, 0))
        q = q + fix
        return _wrap(q, dt)
    if op == "&":
        return np.bitwise_and(a, b, dtype=dt)
    if op == "|":
        return np.bitwise_or(a, b, dtype=dt)
    if op == "^":
        return np.bitwise_xor(a, b, dtype=dt)
    if op in ("<<", ">>"):
        return shift(op, a, b, dt)
    raise UnsupportedType(f"operator {op}")


def _wrap(q, dt: np.dtype):
    if isinstance(q, np.ndarray):
        return q.astype(dt)
    return np.asarray(q).astype(dt)[()]


def shift(op: str, a, b, dt: np.dtype):
    """Shifts as PTX executes them: the count is clamped to the operand width."""
    bits = dt.itemsize * 8
    cnt = np.asarray(b).astype(np.int64)
    big = (cnt >= bits) | (cnt < 0)
    c = np.where(big, 0, cnt).astype(dt)
    if op == "<<":
        r = np.left_shift(a, c, dtype=dt)
        if np.any(big):
            r = np.where(big, dt.type(0), r).astype(dt)
    else:
        r = np.right_shift(a, c, dtype=dt)
        if np.any(big):
            fill = np.where(np.less(a, 0), dt.type(-1) if dt.kind == "i" else 0, 0).astype(dt)
            r = np.where(big, fill, r).astype(dt)
    if not isinstance(a, np.ndarray) and not isinstance(b, np.ndarray):
        return np.asarray(r).astype(dt)[()]
    return r


def compare(op: str, a, b):
    if op == "<":
        return np.less(a, b)
    if op == "<=":
        return np.less_equal(a, b)
    if op == ">":
        return np.greater(a, b)
    if op == ">=":
        return np.greater_equal(a, b)
    if op == "==":
        return np.equal(a, b)
    return np.not_equal(a, b)


def negate(v, ct: ScalarType):
    dt = DTYPES[ct.name]
    return np.negative(v, dtype=dt)


def bitnot(v, ct: ScalarType):
    dt = DTYPES[ct.name]
    return np.invert(v, dtype=dt)


def pointer_like(t: CType | None) -> bool:
    return isinstance(t, PointerType)
