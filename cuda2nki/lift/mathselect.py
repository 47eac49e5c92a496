"""C math functions composed with selects, as formulas for lifted kernels.

The inverse trigonometric functions (``atan2``, ``asin``, ``acos``), ``copysign``, the exact
remainders (``fmod``, ``remainder``) and the classification macros (``isnan``, ``isinf``,
``isfinite``, ``signbit``) have no NKI instruction; the literal lowering composes them with
``where`` (:mod:`cuda2nki.lift.literal.selectmath`, which documents the reductions and C's edge
values kept).  This module writes the same compositions as :mod:`cuda2nki.lift.mathcompose`
formulas with one more operator, ``("select", cond, a, b)``, so that the lifter builds them as
data trees and a map of them is lowered to whole-tile instructions.  Every spelling of the
literal lowering is accepted (``atan2f``, ``__isinff``, ``std::copysign``...).

A predicate's formula is a condition (a comparison or ``lor`` of comparisons); the others are
float formulas whose select conditions are such conditions.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from cuda2nki.lift import values as V
from cuda2nki.lift.literal.selectmath import PREDICATES, function
from cuda2nki.lift.mathcompose import Formula

_X, _Y = "x", "y"
_FLT_MAX = 3.4028234663852886e38
_2P100, _2M100, _2P20, _2M20 = 2.0**100, 2.0**-100, 2.0**20, 2.0**-20
#: the operators that make a condition (a select's first operand, a predicate's result)
CONDITIONS = frozenset({"eq", "ne", "lt", "le", "gt", "ge", "lor", "land", "lnot"})


def _op(name: str) -> Callable[..., tuple]:
    return lambda *a: (name, *a)


_abs, _neg, _min, _max, _floor = _op("abs"), _op("neg"), _op("min"), _op("max"), _op("floor")
_add, _sub, _mul, _div = _op("add"), _op("sub"), _op("mul"), _op("div")
_lt, _le, _gt, _ge, _eq, _ne = _op("lt"), _op("le"), _op("gt"), _op("ge"), _op("eq"), _op("ne")


def _sel(cond: Formula, a: Formula, b: Formula) -> tuple:
    return ("select", cond, a, b)


def _negative(x: Formula) -> tuple:
    """The sign bit of ``x`` (a negative zero too: ``1 / -0`` is ``-inf``)."""
    return ("lor", _lt(x, 0.0), _lt(_div(1.0, x), 0.0))


def _signed(neg: Formula, mag: Formula) -> tuple:
    return _sel(neg, _neg(mag), mag)


def _scaled_div(a: Formula, b: Formula) -> tuple:
    """``a / b`` of magnitudes, both scaled up where ``b`` is tiny: a division may be taken as
    a multiplication by the reciprocal, and a subnormal has no finite one."""
    s = _sel(_lt(b, _2M100), _2P100, 1.0)
    return _div(_mul(a, s), _mul(b, s))


def _angle(p: Formula, q: Formula) -> tuple:
    """``atan(p / q)`` in [0, pi/2] for magnitudes ``p``, ``q``: arctan of a ratio in [0, 1]."""
    lo, hi = _min(p, q), _max(p, q)
    # the ratio of scaled magnitudes: a subnormal ``hi`` has no finite reciprocal
    t = _sel(_eq(hi, 0.0), _mul(lo, 0.0), _scaled_div(lo, hi))  # 0/0: 0
    t = _sel(_gt(lo, _FLT_MAX), _min(lo, 1.0), t)  # inf/inf: 1
    r = ("atan", t)
    return _sel(_gt(p, q), _sub(math.pi / 2, r), r)


def _cosine_side(x: Formula) -> tuple:
    a = _abs(x)
    return ("sqrt", _mul(_sub(1.0, a), _add(1.0, a)))  # NaN where |x| > 1


def _atan2(y: Formula, x: Formula) -> tuple:
    r = _angle(_abs(y), _abs(x))
    return _signed(_negative(y), _sel(_negative(x), _sub(math.pi, r), r))


def _split(a: Formula) -> tuple[tuple, tuple]:
    """``a`` as ``hi + lo`` of 12 significant bits each (Veltkamp; a large ``a`` scaled)."""
    halves = []
    for scale in (1.0, _2M20):
        s = _mul(a, scale)
        c = _mul(s, 4097.0)
        hi = _sub(c, _sub(c, s))
        halves.append((hi, _sub(s, hi)))
    big = _gt(a, _2P100)
    (hi, lo), (shi, slo) = halves
    return _sel(big, _mul(shi, _2P20), hi), _sel(big, _mul(slo, _2P20), lo)


def _residue(ax: Formula, n: Formula, hi: Formula, lo: Formula) -> tuple:
    return _sub(_sub(ax, _mul(n, hi)), _mul(n, lo))


def _fmod_mag(ax: Formula, ay: Formula) -> tuple:
    """``fmod(ax, ay)`` of magnitudes: ``ax - n ay`` with the truncated quotient corrected."""
    hi, lo = _split(ay)
    n = _floor(_scaled_div(ax, ay))
    r = _residue(ax, n, hi, lo)
    n = _add(_sub(n, _lt(r, 0.0)), _ge(r, ay))
    r = _residue(ax, n, hi, lo)
    r = _sel(_gt(ay, _FLT_MAX), ax, r)  # fmod(x, inf) = x
    r = _sel(_gt(ax, _FLT_MAX), _sub(ax, ax), r)  # fmod(inf, y) is NaN
    return _sel(_eq(ay, 0.0), _div(_sub(ay, ay), ay), r)  # fmod(x, 0): 0 / 0, NaN


def _fmod(x: Formula, y: Formula) -> tuple:
    return _signed(_negative(x), _fmod_mag(_abs(x), _abs(y)))


def _remainder(x: Formula, y: Formula) -> tuple:
    """``m = |x| mod 2|y|`` moved into [-|y|/2, |y|/2] (a half to the even quotient)."""
    ay = _abs(y)
    two = _mul(ay, 2.0)
    m = _fmod_mag(_abs(x), two)
    r = _sel(_gt(m, _mul(ay, 0.5)), _sub(m, ay), m)
    r = _sel(_ge(m, _mul(ay, 1.5)), _sub(m, two), r)
    return _signed(_negative(x), r)


#: function -> (arity, formula)
FORMULAS: dict[str, tuple[int, Formula]] = {
    "atan2": (2, _atan2(_X, _Y)),  # atan2(y, x): y first
    "asin": (1, _signed(_negative(_X), _angle(_abs(_X), _cosine_side(_X)))),
    "acos": (
        1,
        _sel(
            _lt(_X, 0.0),
            _sub(math.pi, _angle(_cosine_side(_X), _abs(_X))),
            _angle(_cosine_side(_X), _abs(_X)),
        ),
    ),  # fmt: skip
    "copysign": (2, _signed(_negative(_Y), _abs(_X))),
    "fmod": (2, _fmod(_X, _Y)),
    "remainder": (2, _remainder(_X, _Y)),
    "isnan": (1, _ne(_X, _X)),
    "isinf": (1, _gt(_abs(_X), _FLT_MAX)),
    "isfinite": (1, _le(_abs(_X), _FLT_MAX)),
    "signbit": (1, _negative(_X)),
}


def formula(func: str, arity: int) -> tuple[str, Formula] | None:
    """(function, formula) of a call of ``func`` with ``arity`` arguments, in any spelling
    (``atan2f``, ``__isnanf``...); None: not one of these functions.  ``atan`` is left to
    :mod:`cuda2nki.lift.mathcompose` (it needs no select)."""
    name = function(func, arity)
    if name is None or name not in FORMULAS:
        return None
    return name, FORMULAS[name][1]


def lifted(func: str, data: list[V.DExpr]) -> V.DExpr | None:
    """A call of ``func`` on the lifted ``data`` as its composition (a float32 tree, or a
    ``bool`` one for a predicate); None: not one of these functions."""
    hit = formula(func, len(data))
    if hit is None:
        return None
    name, f = hit
    dt = next((d.dtype for d in data if d.dtype.startswith("float")), "float32")
    args = tuple(_as_float(d, dt) for d in data)
    return _build(f, args, dt, name in PREDICATES)


def _as_float(d: V.DExpr, dt: str) -> V.DExpr:
    if d.dtype == dt:
        return d
    if isinstance(d, V.Const):
        return V.Const(dt, float(d.value))
    return V.Cast(dt, d)


def _build(f: Formula, args: tuple[V.DExpr, ...], dt: str, cond: bool) -> V.DExpr:
    """``f`` as a data tree; ``cond``: in a condition's place (a ``bool`` tree)."""
    if isinstance(f, str):
        return args[0 if f == _X else 1]
    if isinstance(f, float | int):
        return V.Const(dt, float(f))
    op, *operands = f
    if op == "select":
        c, a, b = operands
        return V.Select(dt, _build(c, args, dt, True), _build(a, args, dt, False),
                        _build(b, args, dt, False))  # fmt: skip
    if cond and op in CONDITIONS:
        logical = op in ("lor", "land", "lnot")
        return V.Op("bool", op, tuple(_build(o, args, dt, logical) for o in operands))
    return V.Op(dt, op, tuple(_build(o, args, dt, False) for o in operands))


__all__ = ["CONDITIONS", "FORMULAS", "PREDICATES", "formula", "lifted"]
