"""C math functions the literal lowering composes with selects: the inverse trigonometric
functions (``atan``, ``atan2``, ``asin``, ``acos``), the classification macros (``isnan``,
``isinf``, ``isfinite``, ``signbit``), ``copysign`` and the exact remainders (``fmod``,
``remainder``), in every spelling (``atan2f``, ``__isinff``, ``__finitef``, double overloads).

NKI's ``arctan`` is valid on [-pi/2, pi/2] only (reference 8.2), so every angle is reduced first
to ``atan(t)`` with ``t = min(p, q) / max(p, q)`` in [0, 1] for two magnitudes ``p`` and ``q``
(``atan(p / q)``, or ``pi/2 - atan(q / p)`` where ``p > q``), then moved to its quadrant with
selects; ``asin`` and ``acos`` are angles of ``(x, sqrt((1 - x)(1 + x)))``, whose product form keeps
its accuracy near +-1.  C's edge values are kept: ``atan2(0, 0)`` is 0, ``atan2(inf, inf)``
pi/4, a negative zero is negative (``1 / x < 0``), NaN propagates, ``asin``/``acos`` outside
[-1, 1] are NaN.

``fmod`` (``x - n * y``, ``n`` truncated) and ``remainder`` (``n`` rounded to even) are exact in
C.  The port computes ``n`` from the fp32 quotient and corrects it by one where the rounding of
the quotient put the result outside its interval; the result is then exact to the rounding of
``n * y`` (exact while ``|n| < 2**24 / 2**(bits of y)``, within an ulp of ``x`` beyond).

A call whose arguments are all uniform is computed when the kernel is traced, with NumPy on
float32 values.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.values import Tile, Uni, Value

if TYPE_CHECKING:
    from cuda2nki.lift.literal.lower import Lowerer

#: every spelling -> (function, arity)
_SPELLINGS: dict[str, tuple[str, int]] = {}
for _name, _arity in (("atan", 1), ("atan2", 2), ("asin", 1), ("acos", 1), ("copysign", 2),
                      ("fmod", 2), ("remainder", 2)):  # fmt: skip
    for _s in (_name, _name + "f", f"__{_name}f", f"std::{_name}"):
        _SPELLINGS[_s] = (_name, _arity)
for _name in ("isnan", "isinf", "isfinite", "signbit"):
    for _s in (_name, f"__{_name}", f"__{_name}f", f"__{_name}d", f"std::{_name}"):
        _SPELLINGS[_s] = (_name, 1)
_SPELLINGS["__finitef"] = _SPELLINGS["__finite"] = ("isfinite", 1)

#: predicates (an ``int`` 0/1 result); the others are float functions
PREDICATES = frozenset({"isnan", "isinf", "isfinite", "signbit"})

_FLT_MAX = "3.4028234663852886e+38"
_2P100, _2P20, _2M20 = "1.2676506002282294e+30", "1048576.0", "9.5367431640625e-07"
_PI = repr(float(math.pi))
_HALF_PI = repr(float(math.pi / 2))

#: trace-time NumPy spelling of each function on float32 values
_NUMPY = {
    "atan": "np.arctan", "atan2": "np.arctan2", "asin": "np.arcsin", "acos": "np.arccos",
    "copysign": "np.copysign", "fmod": "np.fmod",
    "isnan": "np.isnan", "isinf": "np.isinf", "isfinite": "np.isfinite", "signbit": "np.signbit",
}  # fmt: skip


def function(func: str, arity: int) -> str | None:
    """The function a call of ``func`` with ``arity`` arguments computes, if this module
    lowers it."""
    hit = _SPELLINGS.get(func)
    return hit[0] if hit is not None and hit[1] == arity else None


def lower_call(low: Lowerer, name: str, args: list[Value], e: A.Call) -> Value:
    """``name(args)`` (a function of :func:`function`) on per-thread or uniform values."""
    if all(isinstance(a, Uni) for a in args):
        return _uniform(name, args)  # type: ignore[arg-type]
    tiles = [low.full_tile(a, "float", e) for a in args]  # a uniform one: a tile of its value
    c = _Composer(low, e.loc.line)
    if name in PREDICATES:
        return Tile(c.predicate(name, tiles[0]), "bool")
    return Tile(getattr(c, name)(*tiles), "float")


def _uniform(name: str, args: list[Uni]) -> Uni:
    spelled = ", ".join(f"np.float32({a.expr})" for a in args)
    if name == "remainder":
        x, y = (f"np.float64(np.float32({a.expr}))" for a in args)
        return Uni(f"np.float32({x} - {y} * np.rint({x} / {y}))", "float")
    if name in PREDICATES:
        return Uni(f"int({_NUMPY[name]}({spelled}))", "int")
    return Uni(f"np.float32({_NUMPY[name]}({spelled}))", "float")


class _Composer:
    """Builds the compositions as NKI elementwise ops through the lowering's emitter."""

    def __init__(self, low: Lowerer, line: int) -> None:
        self.low = low
        self.line = line

    def op(self, name: str, *args: str) -> str:
        return self.low.op(name, list(args), "float").expr

    def where(self, mask: str, a: str, b: str) -> str:
        dst = self.low.fresh("s")
        self.low.emit("where", self.line, dst=dst, mask=mask, a=a, b=b, dtype="nl.float32")
        return dst

    def negative(self, x: str) -> str:
        """1 where ``x`` has its sign bit set (a negative zero too: ``1 / -0`` is ``-inf``)."""
        below = self.op("less", x, "0.0")
        inv = self.op("less", self.op("divide", "1.0", x), "0.0")
        return self.op("maximum", below, inv)

    def predicate(self, name: str, x: str) -> str:
        if name == "isnan":
            return self.op("not_equal", x, x)
        if name == "signbit":
            return self.negative(x)
        mag = self.op("abs", x)
        return self.op("greater" if name == "isinf" else "less_equal", mag, _FLT_MAX)

    def signed(self, neg: str, mag: str) -> str:
        """``-mag`` where ``neg`` is 1, else ``mag``."""
        return self.where(neg, self.op("negative", mag), mag)

    def angle(self, p: str, q: str) -> str:
        """``atan(p / q)`` in [0, pi/2] for magnitudes ``p``, ``q`` >= 0 (``atan2(p, q)``)."""
        lo, hi = self.op("minimum", p, q), self.op("maximum", p, q)
        t = self.op("divide", lo, hi)
        t = self.where(self.op("equal", hi, "0.0"), self.op("multiply", lo, "0.0"), t)  # 0/0
        t = self.where(self.op("greater", lo, _FLT_MAX), self.op("minimum", lo, "1.0"), t)
        r = self.op("arctan", t)  # t in [0, 1]: inside the activation's range
        return self.where(self.op("greater", p, q), self.op("subtract", _HALF_PI, r), r)

    def atan(self, x: str) -> str:
        return self.signed(self.op("less", x, "0.0"), self.angle(self.op("abs", x), "1.0"))

    def cosine_side(self, x: str) -> str:
        """``sqrt((1 - |x|) (1 + |x|))``: NaN where ``|x| > 1``."""
        a = self.op("abs", x)
        return self.op("sqrt", self.op("multiply", self.op("subtract", "1.0", a),
                                       self.op("add", "1.0", a)))  # fmt: skip

    def asin(self, x: str) -> str:
        r = self.angle(self.op("abs", x), self.cosine_side(x))
        return self.signed(self.op("less", x, "0.0"), r)

    def acos(self, x: str) -> str:
        r = self.angle(self.cosine_side(x), self.op("abs", x))
        return self.where(self.op("less", x, "0.0"), self.op("subtract", _PI, r), r)

    def atan2(self, y: str, x: str) -> str:
        r = self.angle(self.op("abs", y), self.op("abs", x))
        r = self.where(self.negative(x), self.op("subtract", _PI, r), r)
        return self.signed(self.negative(y), r)

    def copysign(self, x: str, y: str) -> str:
        return self.signed(self.negative(y), self.op("abs", x))

    def fmod(self, x: str, y: str) -> str:
        """``|x| - n |y|`` with ``n = floor(|x| / |y|)`` corrected by one where the rounded
        quotient was off, the product taken exactly in two halves of ``|y|``; the sign of ``x``."""
        ax, ay = self.op("abs", x), self.op("abs", y)
        hi, lo = self.split(ay)
        n = self.op("floor", self.op("divide", ax, ay))
        r = self.residue(ax, n, hi, lo)
        n = self.op("subtract", n, self.op("less", r, "0.0"))
        n = self.op("add", n, self.op("greater_equal", r, ay))
        r = self.residue(ax, n, hi, lo)
        r = self.where(self.op("greater", ay, _FLT_MAX), ax, r)  # fmod(x, inf) = x
        r = self.where(self.op("greater", ax, _FLT_MAX), self.op("subtract", ax, ax), r)  # NaN
        nan = self.op("divide", self.op("subtract", ay, ay), "0.0")
        r = self.where(self.op("equal", ay, "0.0"), nan, r)  # fmod(x, 0) is NaN
        return self.signed(self.negative(x), r)

    def split(self, a: str) -> tuple[str, str]:
        """``a`` as ``hi + lo``, each of 12 significant bits (Veltkamp's split; a large ``a``
        split scaled down by 2**-20, so that ``4097 a`` stays finite)."""
        halves = []
        for scale in ("1.0", _2M20):
            s = self.op("multiply", a, scale)
            c = self.op("multiply", s, "4097.0")
            hi = self.op("subtract", c, self.op("subtract", c, s))
            halves.append((hi, self.op("subtract", s, hi)))
        big = self.op("greater", a, _2P100)
        return tuple(  # type: ignore[return-value]
            self.where(big, self.op("multiply", scaled, _2P20), plain)
            for plain, scaled in zip(halves[0], halves[1])
        )

    def residue(self, ax: str, n: str, hi: str, lo: str) -> str:
        """``ax - n (hi + lo)``: exact while ``n < 2**12`` (each product is)."""
        return self.op("subtract", self.op("subtract", ax, self.op("multiply", n, hi)),
                       self.op("multiply", n, lo))  # fmt: skip

    def remainder(self, x: str, y: str) -> str:
        """``x - n * y`` with ``n`` the quotient rounded to even: the remainder ``m`` of ``|x|``
        modulo ``2|y|`` moved into [-|y|/2, |y|/2] (a half to the even quotient)."""
        ax, ay = self.op("abs", x), self.op("abs", y)
        two = self.op("multiply", ay, "2.0")
        m = self.fmod(ax, two)  # in [0, 2|y|)
        half, three = self.op("multiply", ay, "0.5"), self.op("multiply", ay, "1.5")
        r = self.where(self.op("greater", m, half), self.op("subtract", m, ay), m)
        r = self.where(self.op("greater_equal", m, three), self.op("subtract", m, two), r)
        return self.signed(self.negative(x), r)


__all__ = ["PREDICATES", "function", "lower_call"]
