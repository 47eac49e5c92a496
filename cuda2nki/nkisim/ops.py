"""ALU operators and activation functions, evaluated in fp32 on NumPy arrays.

Operators are identified by name.  An ``op=`` argument may be an ``nl`` function (which carries
``_nki_op``), a NumPy ufunc (legacy kernels pass ``np.add``, ``np.exp``), or an enum-like name.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np

from cuda2nki.nkisim.errors import invalid

F32 = np.float32


def _erf(x: np.ndarray) -> np.ndarray:
    """erf in float64 via a Chebyshev fit of erfc (abs error < 1.2e-7, below fp32 resolution)."""
    x64 = np.asarray(x, dtype=np.float64)
    z = np.abs(x64)
    t = 1.0 / (1.0 + 0.5 * z)
    y = t * np.exp(
        -z * z
        - 1.26551223
        + t
        * (
            1.00002368
            + t
            * (
                0.37409196
                + t
                * (
                    0.09678418
                    + t
                    * (
                        -0.18628806
                        + t
                        * (
                            0.27886807
                            + t
                            * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))
                        )
                    )
                )
            )
        )
    )
    r = 1.0 - y
    return np.where(x64 >= 0, r, -r).astype(F32)


#: Non-empty while a kernel runs: ``kernel.run`` turns every floating-point warning off for the
#: whole run (``warnings_off``), so the functions below skip their own ``np.errstate`` there
#: (entering one costs about a microsecond, as much as the arithmetic on a small tile).
_WARNINGS_OFF: list[int] = []


@contextlib.contextmanager
def warnings_off():
    """No floating-point warnings (the hardware raises none) until exit."""
    with np.errstate(all="ignore"):
        _WARNINGS_OFF.append(1)
        try:
            yield
        finally:
            _WARNINGS_OFF.pop()


def _quiet(fn, **err):
    """``fn`` with the floating-point warnings ``err`` off (they already are inside a run)."""

    def quiet(*args):
        if _WARNINGS_OFF:
            return fn(*args)
        with np.errstate(**err):
            return fn(*args)

    quiet.__name__ = quiet.__qualname__ = getattr(fn, "__name__", "quiet")
    return quiet


_sigmoid = _quiet(lambda x: (1.0 / (1.0 + np.exp(-x))).astype(F32, copy=False), over="ignore")


_softplus = _quiet(lambda x: np.logaddexp(F32(0), x).astype(F32, copy=False), over="ignore")


_SQ2 = F32(math.sqrt(2.0))
_SQ2PI = F32(math.sqrt(2.0 / math.pi))
_INV_SQRT_2PI = F32(1.0 / math.sqrt(2.0 * math.pi))


def _gelu(x):
    return F32(0.5) * x * (F32(1) + _erf(x / _SQ2))


def _gelu_tanh(x):
    return F32(0.5) * x * (F32(1) + np.tanh(_SQ2PI * (x + F32(0.044715) * x * x * x)))


def _gelu_sig(x):
    return x * _sigmoid(F32(1.702) * x)


def _gelu_sig_dx(x):
    X = F32(1.702) * x
    return _sigmoid(X) * (F32(1) + X * _sigmoid(-X))


def _gelu_dx(x):
    cdf = F32(0.5) * (F32(1) + _erf(x / _SQ2))
    pdf = _INV_SQRT_2PI * np.exp(F32(-0.5) * x * x)
    return cdf + x * pdf


def _silu_dx(x):
    s = _sigmoid(x)
    return s + x * s * (F32(1) - s)


def _sign(x):
    return np.sign(x).astype(F32, copy=False)


_rsqrt = _quiet(lambda x: F32(1) / np.sqrt(x), divide="ignore", invalid="ignore")


_recip = _quiet(lambda x: F32(1) / x, divide="ignore")


_log = _quiet(np.log, divide="ignore", invalid="ignore")


_sqrt = _quiet(np.sqrt, invalid="ignore")


_exp = _quiet(np.exp, over="ignore")


def _sin_hw(x):
    return np.sin(x)


# Unary functions usable as activation ``op`` (and as nl unary ops).
UNARY = {
    "copy": lambda x: x,
    "bypass": lambda x: x,
    "identity": lambda x: x,
    "exp": _exp,
    "log": _log,
    "sqrt": _sqrt,
    "rsqrt": _rsqrt,
    "reciprocal": _recip,
    "square": np.square,
    "abs": np.abs,
    "negative": np.negative,
    "sign": _sign,
    "trunc": np.trunc,
    "floor": np.floor,
    "ceil": np.ceil,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "arctan": np.arctan,
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, F32(0)),
    "sigmoid": _sigmoid,
    "gelu": _gelu,
    "gelu_apprx_tanh": _gelu_tanh,
    "gelu_apprx_sigmoid": _gelu_sig,
    "gelu_apprx_sigmoid_dx": _gelu_sig_dx,
    "gelu_dx": _gelu_dx,
    "silu": lambda x: x * _sigmoid(x),
    "silu_dx": _silu_dx,
    "softplus": _softplus,
    "mish": lambda x: x * np.tanh(_softplus(x)),
    "erf": _erf,
    "erf_dx": lambda x: F32(2.0 / math.sqrt(math.pi)) * np.exp(-x * x),
    "logical_not": lambda x: (x == 0).astype(F32),
}

# Valid input ranges of Scalar-engine functions (reference 8.2); outside them hardware differs.
ACT_RANGES = {
    "log": (2.0**-64, 2.0**64),
    "sin": (-math.pi, math.pi),
    "arctan": (-math.pi / 2, math.pi / 2),
    "sqrt": (2.0**-116, 2.0**118),
    "rsqrt": (2.0**-87, 2.0**97),
}


_fmod = _quiet(np.fmod, divide="ignore", invalid="ignore")


_mod = _quiet(np.mod, divide="ignore", invalid="ignore")


_divide = _quiet(np.divide, divide="ignore", invalid="ignore")


_power = _quiet(np.power, divide="ignore", invalid="ignore", over="ignore")


def _abs_max(a, b):
    return np.where(np.abs(a) > np.abs(b), a, b)


def _abs_min(a, b):
    return np.where(np.abs(a) < np.abs(b), a, b)


def _cmp(f):
    return lambda a, b: f(a, b).astype(F32)


def _logic(f):
    return lambda a, b: f(a != 0, b != 0).astype(F32)


# Arithmetic binary ALU ops (fp32 in, fp32 out).
BINARY = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": _divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "power": _power,
    "fmod": _fmod,
    "mod": _mod,
    "abs_max": _abs_max,
    "abs_min": _abs_min,
    "equal": _cmp(np.equal),
    "not_equal": _cmp(np.not_equal),
    "greater": _cmp(np.greater),
    "greater_equal": _cmp(np.greater_equal),
    "less": _cmp(np.less),
    "less_equal": _cmp(np.less_equal),
    "logical_and": _logic(np.logical_and),
    "logical_or": _logic(np.logical_or),
    "logical_xor": _logic(np.logical_xor),
    "bypass": lambda a, b: a,
}

# Bit-vector ops: exact on the integer bit patterns.
BITVEC = {
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
    "left_shift": np.left_shift,
    "right_shift": None,  # logical shift: done on the unsigned view
    "arith_shift_right": np.right_shift,
    "invert": None,
}

# Reduction identities and NumPy reducers (fp32).
REDUCE = {
    "add": (np.add, 0.0),
    "subtract": (np.add, 0.0),
    "multiply": (np.multiply, 1.0),
    "maximum": (np.maximum, -np.inf),
    "minimum": (np.minimum, np.inf),
    "logical_and": (np.logical_and, 1.0),
    "logical_or": (np.logical_or, 0.0),
    "logical_xor": (np.logical_xor, 0.0),
    "bitwise_and": (np.bitwise_and, -1),
    "bitwise_or": (np.bitwise_or, 0),
    "bitwise_xor": (np.bitwise_xor, 0),
    "average": (np.add, 0.0),
}

_NP_NAMES = {
    np.add: "add",
    np.subtract: "subtract",
    np.multiply: "multiply",
    np.divide: "divide",
    np.true_divide: "divide",
    np.maximum: "maximum",
    np.minimum: "minimum",
    np.power: "power",
    np.fmod: "fmod",
    np.mod: "mod",
    np.equal: "equal",
    np.not_equal: "not_equal",
    np.greater: "greater",
    np.greater_equal: "greater_equal",
    np.less: "less",
    np.less_equal: "less_equal",
    np.logical_and: "logical_and",
    np.logical_or: "logical_or",
    np.logical_xor: "logical_xor",
    np.logical_not: "logical_not",
    np.bitwise_and: "bitwise_and",
    np.bitwise_or: "bitwise_or",
    np.bitwise_xor: "bitwise_xor",
    np.left_shift: "left_shift",
    np.right_shift: "right_shift",
    np.invert: "invert",
    np.exp: "exp",
    np.log: "log",
    np.sqrt: "sqrt",
    np.square: "square",
    np.abs: "abs",
    np.absolute: "abs",
    np.negative: "negative",
    np.sign: "sign",
    np.trunc: "trunc",
    np.floor: "floor",
    np.ceil: "ceil",
    np.sin: "sin",
    np.cos: "cos",
    np.tan: "tan",
    np.arctan: "arctan",
    np.tanh: "tanh",
    np.reciprocal: "reciprocal",
    np.sum: "add",
    np.max: "maximum",
    np.min: "minimum",
    np.prod: "multiply",
    np.mean: "average",
    np.amax: "maximum",
    np.amin: "minimum",
}


def op_name(op, api: str) -> str:
    """Name of an ``op=`` argument (nl function, NumPy ufunc or name string)."""
    if op is None:
        return "bypass"
    n = getattr(op, "_nki_op", None)
    if n is not None:
        return n
    try:
        n = _NP_NAMES.get(op)
    except TypeError:
        n = None
    if n is not None:
        return n
    if isinstance(op, str):
        return op
    raise invalid(api, f"unknown operator {op!r}")


def is_bitvec(name: str) -> bool:
    return name in BITVEC


def apply_binary(name: str, a, b, api: str, int_dtype=None):
    """Evaluate a binary ALU op.  Arithmetic in fp32; bit-vector ops on integer bit patterns."""
    if name in BITVEC:
        return apply_bitvec(name, a, b, api, int_dtype)
    f = BINARY.get(name)
    if f is None:
        f1 = UNARY.get(name)
        if f1 is not None:  # unary op used in a binary slot: operand ignored
            return f1(a)
        raise invalid(api, f"operator '{name}' is not an ALU operator")
    return f(a, b)


def apply_bitvec(name: str, a, b, api: str, int_dtype=None):
    ad = np.asarray(a)
    if ad.dtype.kind == "f" or (b is not None and np.asarray(b).dtype.kind == "f"):
        raise invalid(api, f"bit-vector operator '{name}' needs integer operands")
    t = (
        int_dtype
        if int_dtype is not None
        else (ad.dtype if ad.dtype.kind in "iu" else np.dtype(np.int32))
    )
    a_ = ad.astype(t, copy=False)
    if name == "invert":
        return np.invert(a_)
    b_ = np.asarray(b).astype(t, copy=False)
    if name == "right_shift":
        u = np.dtype(f"u{t.itemsize}")
        return np.right_shift(a_.astype(u), b_.astype(u)).astype(t)
    return BITVEC[name](a_, b_)


def apply_unary(name: str, x, api: str):
    f = UNARY.get(name)
    if f is None:
        raise invalid(api, f"'{name}' is not an activation function")
    return f(x)


def reduce(name: str, x: np.ndarray, axis, api: str, keepdims: bool = True):
    ent = REDUCE.get(name)
    if ent is None:
        raise invalid(api, f"'{name}' is not a reduction operator")
    f, _ = ent
    if name == "average":
        return np.mean(x, axis=axis, keepdims=keepdims, dtype=F32)
    if f in (np.logical_and, np.logical_or, np.logical_xor):
        return f.reduce(x != 0, axis=axis, keepdims=keepdims).astype(F32)
    if x.dtype.kind in "iu" and f in (np.bitwise_and, np.bitwise_or, np.bitwise_xor):
        return f.reduce(x, axis=axis, keepdims=keepdims)
    return f.reduce(x, axis=axis, keepdims=keepdims, dtype=x.dtype if x.dtype.kind == "f" else F32)
