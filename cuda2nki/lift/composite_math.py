"""CUDA math functions with no NKI activation of their own, written with ones that have.

``coshf``/``sinhf`` through ``exp`` (``(e^x +- e^-x) / 2``), ``exp10f`` as ``exp(x ln 10)`` and
``log10f`` as ``log(x) / ln 10``.  The expansions agree with the library functions to a few ulp
over the range where both are finite, except that ``exp10`` inherits the rounding of its scaled
argument (a relative error of about ``|x ln 10|`` ulp, 1e-6 at ``x = 8``) and ``cosh``/``sinh``
of ``|x|`` within about 0.7 of the float32 overflow point (|x| ~ 88.7 to 89.4) overflow one step
earlier here (``e^x`` is infinite where ``e^x / 2`` would not be).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from cuda2nki.lift import values as V

_LN10 = math.log(10.0)


def _exp_pair(dt: str, x: V.DExpr, sign: float) -> V.DExpr:
    pos = V.Op(dt, "exp", (x,))
    neg = V.Op(dt, "exp", (V.Op(dt, "mul", (x, V.Const(dt, -1.0))),))
    both = V.Op(dt, "add" if sign > 0 else "sub", (pos, neg))
    return V.Op(dt, "mul", (both, V.Const(dt, 0.5)))


def _cosh(dt: str, x: V.DExpr) -> V.DExpr:
    return _exp_pair(dt, x, 1.0)


def _sinh(dt: str, x: V.DExpr) -> V.DExpr:
    return _exp_pair(dt, x, -1.0)


def _exp10(dt: str, x: V.DExpr) -> V.DExpr:
    return V.Op(dt, "exp", (V.Op(dt, "mul", (x, V.Const(dt, _LN10))),))


def _log10(dt: str, x: V.DExpr) -> V.DExpr:
    return V.Op(dt, "mul", (V.Op(dt, "log", (x,)), V.Const(dt, 1.0 / _LN10)))


_COMPOSITE: dict[str, Callable[[str, V.DExpr], V.DExpr]] = {
    "cosh": _cosh,
    "sinh": _sinh,
    "exp10": _exp10,
    "log10": _log10,
}


def composite_call(name: str, dt: str, args: list[V.DExpr]) -> V.DExpr | None:
    """The expansion of the one-argument math function ``name`` (``cosh``, ``coshf``...) in
    ``dt``, or None when ``name`` is not one of them."""
    base = name.removesuffix("f") if name.removesuffix("f") in _COMPOSITE else name
    build = _COMPOSITE.get(base)
    if build is None or len(args) != 1:
        return None
    return build(dt, args[0])
