"""CUDA math functions NKI has no instruction for, written with those it has.

``coshf``, ``sinhf``, ``expm1f``, ``log1pf``, ``exp2f``, ``log10f``, ``erfcf``, ``normcdff``,
``cbrtf`` and their kin (double, ``__`` fast-math spellings) have no ``nl`` activation (and
``atanf`` one valid on [-pi/2, pi/2] only, so it is range-reduced); each is
the textbook identity over ``exp``, ``log``, ``erf``, ``sqrt``, ``sin``/``cos`` and arithmetic,
so the lifter (:mod:`cuda2nki.lift.symexec`) and the literal lowering
(:mod:`cuda2nki.lift.literal.lower`) build the same composition from one table.  The CUDA kernel
itself runs in the SIMT interpreter with NumPy's own functions, so the check compares each
composition with the real function (tolerances are those of the transcendental ops used).

A formula is ``"x"`` (the argument; ``"y"``, ``"z"``, ``"w"`` the next ones), a float constant, or
``(op, *operands)`` with ``op`` a :class:`cuda2nki.ir.ops.Op` value that has an NKI spelling.
The functions that need a select (``atan2``, ``asin``, ``fmod``, ``isnan``...) are formulas of
:mod:`cuda2nki.lift.mathselect`, with ``("select", cond, a, b)`` as one more operator.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

from cuda2nki.ir.ops import OP_INFO, Op

Formula = float | str | tuple

_X, _Y, _Z, _W = "x", "y", "z", "w"
#: the names of the arguments, in order
_ARGS = (_X, _Y, _Z, _W)
_LN2 = math.log(2.0)
_LN10 = math.log(10.0)


def _exp(a: Formula) -> tuple:
    return ("exp", a)


def _mul(a: Formula, b: Formula) -> tuple:
    return ("mul", a, b)


def _add(a: Formula, b: Formula) -> tuple:
    return ("add", a, b)


def _sub(a: Formula, b: Formula) -> tuple:
    return ("sub", a, b)


def _log(a: Formula) -> tuple:
    return ("log", a)


def _sqrt(a: Formula) -> tuple:
    return ("sqrt", a)


def _atan(a: Formula) -> tuple:
    """``atan(x)`` with NKI's ``arctan`` kept in its valid range [-pi/2, pi/2]: ``r = arctan(t)``
    of ``t = min(|x|, 1/|x|)`` in [0, 1], ``pi/2 - r`` where ``|x| > 1``, the sign of ``x``
    (masks as 0/1 factors: no select; inf gives pi/2, NaN stays NaN)."""
    mag = ("abs", a)
    r = ("atan", ("min", mag, ("div", 1.0, mag)))
    big = ("gt", mag, 1.0)
    return _mul(("sign", a), _add(r, _mul(big, _sub(math.pi / 2, _mul(2.0, r)))))


def _squares(*xs: Formula) -> Formula:
    """The sum of the squares of ``xs``."""
    out: Formula = _mul(xs[0], xs[0])
    for x in xs[1:]:
        out = _add(out, _mul(x, x))
    return out


def _cbrt(a: Formula) -> tuple:  # the real cube root: the sign of x times |x| ** (1/3)
    return _mul(("sign", a), ("pow", ("abs", a), 1.0 / 3.0))


#: base name (without the ``f`` suffix and fast-math ``__``) -> (arity, formula)
FORMULAS: dict[str, tuple[int, Formula]] = {
    "cosh": (1, _mul(0.5, _add(_exp(_X), _exp(("neg", _X))))),
    "sinh": (1, _mul(0.5, _sub(_exp(_X), _exp(("neg", _X))))),
    "expm1": (1, _sub(_exp(_X), 1.0)),
    "log1p": (1, _log(_add(_X, 1.0))),
    "exp2": (1, _exp(_mul(_X, _LN2))),
    "exp10": (1, _exp(_mul(_X, _LN10))),
    "log2": (1, _mul(_log(_X), 1.0 / _LN2)),
    "log10": (1, _mul(_log(_X), 1.0 / _LN10)),
    "erfc": (1, _sub(1.0, ("erf", _X))),
    "normcdf": (1, _mul(0.5, _add(1.0, ("erf", _mul(_X, 1.0 / math.sqrt(2.0)))))),
    "atan": (1, _atan(_X)),
    "cbrt": (1, _cbrt(_X)),
    "rcbrt": (1, ("div", 1.0, _cbrt(_X))),
    "asinh": (1, _mul(("sign", _X), _log(_add(("abs", _X), _sqrt(_add(_mul(_X, _X), 1.0)))))),
    "acosh": (1, _log(_add(_X, _sqrt(_sub(_mul(_X, _X), 1.0))))),
    "atanh": (1, _mul(0.5, _log(("div", _add(1.0, _X), _sub(1.0, _X))))),
    "sinpi": (1, ("sin", _mul(_X, math.pi))),
    "cospi": (1, ("cos", _mul(_X, math.pi))),
    "hypot": (2, _sqrt(_add(_mul(_X, _X), _mul(_Y, _Y)))),
    "rhypot": (2, ("div", 1.0, _sqrt(_add(_mul(_X, _X), _mul(_Y, _Y))))),
    "norm3d": (3, _sqrt(_squares(_X, _Y, _Z))),
    "rnorm3d": (3, ("div", 1.0, _sqrt(_squares(_X, _Y, _Z)))),
    "norm4d": (4, _sqrt(_squares(_X, _Y, _Z, _W))),
    "rnorm4d": (4, ("div", 1.0, _sqrt(_squares(_X, _Y, _Z, _W)))),
    "fdim": (2, ("max", _sub(_X, _Y), 0.0)),
}


def formula(func: str, arity: int) -> Formula | None:
    """The composition standing for the CUDA math function ``func`` called with ``arity``
    arguments (``coshf``, ``cosh``, ``__coshf``), else None."""
    base = func[2:] if func.startswith("__") else func
    for name in (base, base[:-1] if base.endswith("f") else None):
        if name in FORMULAS and FORMULAS[name][0] == arity:
            return FORMULAS[name][1]
    return None


def nki_name(op: str) -> str:
    """The ``nl`` function of a formula's operator."""
    if op == "div":
        return "divide"
    nki = OP_INFO[Op(op)].nki
    assert nki is not None, op
    return nki


T = TypeVar("T")


def build(
    f: Formula,
    args: tuple[T, ...],
    const: Callable[[float], T],
    apply: Callable[[str, tuple[T, ...]], T],
) -> T:
    """``f`` over ``args`` through a builder: ``const`` makes a constant, ``apply`` an
    operator (a :class:`~cuda2nki.ir.ops.Op` value) of its operands."""
    if isinstance(f, str):
        return args[_ARGS.index(f)]
    if isinstance(f, float | int):
        return const(float(f))
    op, *operands = f
    return apply(op, tuple(build(o, args, const, apply) for o in operands))


__all__ = ["FORMULAS", "Formula", "build", "formula", "nki_name"]
