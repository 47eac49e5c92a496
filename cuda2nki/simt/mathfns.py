"""CUDA math functions as NumPy computations with CUDA's result types.

Single-precision functions are evaluated in float64 and rounded once to float32: the result is the
correctly rounded value in all but astronomically rare cases, which is what an ideal CUDA device
returns (CUDA's own ``expf``... are within 1-2 ulp of it; the ``__expf``-style fast intrinsics are
less accurate on hardware -- the table notes this).  Operations IEEE defines exactly (``sqrtf``,
``fmaf``, ``fminf``, rounding functions) are exact here too.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)


def _vec(fn: Callable[[float], float]) -> Callable[[np.ndarray], np.ndarray]:
    """Lift a scalar ``math`` function to arrays (used for functions NumPy lacks: erf, lgamma)."""

    def f(x):
        a = np.asarray(x, dtype=np.float64)
        if a.ndim == 0:
            return np.float64(_safe(fn, float(a)))
        u, inv = np.unique(a, return_inverse=True)
        vals = np.array([_safe(fn, float(v)) for v in u], dtype=np.float64)
        return vals[inv].reshape(a.shape)

    return f


def _safe(fn, v: float) -> float:
    try:
        return fn(v)
    except (ValueError, OverflowError):
        if math.isnan(v):
            return math.nan
        try:
            return fn(math.copysign(1e308, v))
        except (ValueError, OverflowError):
            return math.nan


def _round_half_away(x):
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


def _rsqrt(x):
    return 1.0 / np.sqrt(x)


def _exp10(x):
    return np.power(10.0, x)


def _sincos_pi(fn):
    return lambda x: fn(np.pi * x)


def _cospi(x):
    return np.cos(np.pi * x)


def _sinpi(x):
    return np.sin(np.pi * x)


def _frexp_mant(x):
    return np.frexp(x)[0]


def _fdim(a, b):
    return np.where(a > b, a - b, 0.0)


def _normcdf(x):
    return 0.5 * (1.0 + _vec(math.erf)(np.asarray(x) / math.sqrt(2.0)))


def _erfinv_scalar(y: float) -> float:
    """Inverse error function by Newton iteration on ``math.erf`` (float64 accurate)."""
    if math.isnan(y) or y < -1 or y > 1:
        return math.nan
    if y == 1:
        return math.inf
    if y == -1:
        return -math.inf
    # initial guess (Giles' single-precision approximation), then Newton steps
    w = -math.log((1.0 - y) * (1.0 + y))
    if w < 5:
        w -= 2.5
        p = 2.81022636e-08
        for c in (
            3.43273939e-07,
            -3.5233877e-06,
            -4.39150654e-06,
            0.00021858087,
            -0.00125372503,
            -0.00417768164,
            0.246640727,
            1.50140941,
        ):
            p = c + p * w
    else:
        w = math.sqrt(w) - 3
        p = -0.000200214257
        for c in (
            0.000100950558,
            0.00134934322,
            -0.00367342844,
            0.00573950773,
            -0.0076224613,
            0.00943887047,
            1.00167406,
            2.83297682,
        ):
            p = c + p * w
    x = p * y
    for _ in range(4):
        err = math.erf(x) - y
        x -= err / (2.0 / math.sqrt(math.pi) * math.exp(-x * x))
    return x


def _erfcinv_scalar(y: float) -> float:
    return _erfinv_scalar(1.0 - y)


def _normcdfinv_scalar(y: float) -> float:
    return -math.sqrt(2.0) * _erfcinv_scalar(2.0 * y)


def _ilogb(x):
    m, e = np.frexp(x)
    r = (e - 1).astype(np.float64)
    return np.where(x == 0, -(2.0**31), np.where(np.isinf(x) | np.isnan(x), 2.0**31 - 1, r))


def _lerp(a, b, t):
    return a + t * (b - a)


@dataclass(frozen=True)
class MathFn:
    base: str  # spelling without the 'f' suffix (the double name)
    fn: Callable
    arity: int
    exact: bool  # True when evaluating in the operand precision is already exact (IEEE)
    note: str = ""


def _m(base, fn, arity=1, exact=False, note=""):
    return MathFn(base, fn, arity, exact, note)


def _norm3(a, b, c):
    return np.hypot(np.hypot(a, b), c)


def _norm4(a, b, c, d):
    return np.hypot(np.hypot(a, b), np.hypot(c, d))


_NORM_NOTE = (
    "computed in float64 as nested hypot (no overflow or underflow of the squares) and rounded "
    "once; CUDA allows 2-3 ulp"
)

ERF = _vec(math.erf)
ERFC = _vec(math.erfc)
LGAMMA = _vec(math.lgamma)
TGAMMA = _vec(math.gamma)

MATH: dict[str, MathFn] = {
    m.base: m
    for m in (
        _m("exp", np.exp),
        _m("exp2", np.exp2),
        _m("exp10", _exp10),
        _m("expm1", np.expm1),
        _m("log", np.log),
        _m("log2", np.log2),
        _m("log10", np.log10),
        _m("log1p", np.log1p),
        _m("sqrt", np.sqrt, exact=True),
        _m("rsqrt", _rsqrt),
        _m("cbrt", np.cbrt),
        _m("sin", np.sin),
        _m("cos", np.cos),
        _m("tan", np.tan),
        _m("asin", np.arcsin),
        _m("acos", np.arccos),
        _m("atan", np.arctan),
        _m("atan2", np.arctan2, 2),
        _m("sinh", np.sinh),
        _m("cosh", np.cosh),
        _m("tanh", np.tanh),
        _m("asinh", np.arcsinh),
        _m("acosh", np.arccosh),
        _m("atanh", np.arctanh),
        _m("sinpi", _sinpi),
        _m("cospi", _cospi),
        _m("erf", ERF, note="evaluated with math.erf per distinct value (slow on large arrays)"),
        _m("erfc", ERFC, note="evaluated with math.erfc per distinct value (slow on large arrays)"),
        _m("lgamma", LGAMMA, note="math.lgamma per distinct value"),
        _m("tgamma", TGAMMA, note="math.gamma per distinct value"),
        _m("normcdf", _normcdf),
        _m("pow", np.power, 2),
        _m("hypot", np.hypot, 2),
        _m("rhypot", lambda a, b: 1.0 / np.hypot(a, b), 2),
        _m("norm3d", _norm3, 3, note=_NORM_NOTE),
        _m("rnorm3d", lambda a, b, c: 1.0 / _norm3(a, b, c), 3, note=_NORM_NOTE),
        _m("norm4d", _norm4, 4, note=_NORM_NOTE),
        _m("rnorm4d", lambda a, b, c, d: 1.0 / _norm4(a, b, c, d), 4, note=_NORM_NOTE),
        _m("fmod", np.fmod, 2, exact=True),
        _m("remainder", lambda a, b: a - b * np.rint(a / b), 2),
        _m("fabs", np.abs, exact=True),
        _m("floor", np.floor, exact=True),
        _m("ceil", np.ceil, exact=True),
        _m("trunc", np.trunc, exact=True),
        _m("round", _round_half_away, exact=True),
        _m("rint", np.rint, exact=True),
        _m("nearbyint", np.rint, exact=True),
        _m("fmax", np.fmax, 2, exact=True),
        _m("fmin", np.fmin, 2, exact=True),
        _m("fdim", _fdim, 2),
        _m("copysign", np.copysign, 2, exact=True),
        _m(
            "fma",
            lambda a, b, c: a * b + c,
            3,
            note="float: the product is exact in float64 and the sum rounds once to float32 "
            "(double rounding possible in rare ties); double: two roundings",
        ),
        _m("ldexp", lambda a, e: np.ldexp(a, np.asarray(e, dtype=np.int32)), 2),
        _m("lerp", _lerp, 3),
        _m("erfinv", _vec(_erfinv_scalar), note="Newton iteration on math.erf per distinct value"),
        _m(
            "erfcinv", _vec(_erfcinv_scalar), note="Newton iteration on math.erf per distinct value"
        ),
        _m("normcdfinv", _vec(_normcdfinv_scalar), note="Newton iteration on math.erf"),
        _m("rcbrt", lambda x: 1.0 / np.cbrt(x)),
        _m("logb", lambda x: np.where(x == 0, -np.inf, _ilogb(np.abs(x)))),
        _m("scalbn", lambda a, e: np.ldexp(a, np.asarray(e, dtype=np.int32)), 2),
    )
}

# fast-math intrinsics: name -> (base MathFn, note)
FAST = {
    "__expf": "exp",
    "__exp10f": "exp10",
    "__logf": "log",
    "__log2f": "log2",
    "__log10f": "log10",
    "__sinf": "sin",
    "__cosf": "cos",
    "__tanf": "tan",
    "__powf": "pow",
    "__fsqrt_rn": "sqrt",
    "__frsqrt_rn": "rsqrt",
    "__tanhf": "tanh",
}
FAST_NOTE = (
    "hardware fast-math approximation on a GPU; the interpreter returns the correctly "
    "rounded float32 value (the GPU result may differ by a few ulp)"
)


def compute(m: MathFn, args: list, dt: np.dtype):
    """Evaluate ``m`` on ``args`` (already of dtype ``dt``), returning dtype ``dt``."""
    if dt == F64:
        with np.errstate(all="ignore"):
            return _as(m.fn(*[np.asarray(a, F64) for a in args]), F64)
    with np.errstate(all="ignore"):
        if m.exact and m.base not in ("fma",):
            r = m.fn(*[np.asarray(a, dt) for a in args])
            return _as(r, dt)
        r = m.fn(*[np.asarray(a, F64) for a in args])
    return _as(r, dt)


def _as(r, dt):
    r = np.asarray(r)
    out = r.astype(dt) if r.dtype != dt else r
    return out if out.ndim else out[()]
