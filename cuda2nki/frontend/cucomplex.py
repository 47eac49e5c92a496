"""The cuComplex.h helpers on ``cuFloatComplex`` / ``cuDoubleComplex`` (``float2`` / ``double2``).

Each helper is an inline function of the header over the real and imaginary lanes; the front
end writes its body out as an expression on the ``.x`` / ``.y`` lanes of the arguments, in the
header's order of operations (``cuCdivf`` with its scaling by ``|re| + |im|``, ``cuCfmaf``
adding ``d`` before the second product), so the interpreter and the lifter see plain vector
arithmetic.  An argument with side effects (an assignment, an increment, a call of a user
function or an atomic) is evaluated once, into a local of the function, before the body reads
its lanes (``cuCabsf(mul(a, b))``); without a place for such a local the call is refused rather
than evaluated twice.  ``cuCabsf`` is ``hypotf`` of the lanes (the header's scaled form of it).
"""

from __future__ import annotations

from collections.abc import Callable

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.libtypes import DOUBLE2, FLOAT2
from cuda2nki.frontend.visit import walk

_F32, _F64 = A.ScalarType(name="float32"), A.ScalarType(name="float64")

# name -> (argument count, double precision)
_FLOAT_NAMES = {
    "cuCrealf": 1,
    "cuCimagf": 1,
    "make_cuFloatComplex": 2,
    "make_cuComplex": 2,
    "cuConjf": 1,
    "cuCaddf": 2,
    "cuCsubf": 2,
    "cuCmulf": 2,
    "cuCdivf": 2,
    "cuCabsf": 1,
    "cuCfmaf": 3,
    "cuComplexDoubleToFloat": 1,
}
_DOUBLE_NAMES = {
    "cuCreal": 1,
    "cuCimag": 1,
    "make_cuDoubleComplex": 2,
    "cuConj": 1,
    "cuCadd": 2,
    "cuCsub": 2,
    "cuCmul": 2,
    "cuCdiv": 2,
    "cuCabs": 1,
    "cuCfma": 3,
    "cuComplexFloatToDouble": 1,
}
COMPLEX_HELPERS = frozenset(_FLOAT_NAMES) | frozenset(_DOUBLE_NAMES)
_SIDE_EFFECT_OPS = ("pre++", "pre--", "post++", "post--")


class ComplexCallError(Exception):
    """A helper call that cannot be written out (message: what)."""


def _impure(e: A.Expr) -> bool:
    for n in walk(e):
        if isinstance(n, A.Assign):
            return True
        if isinstance(n, A.Unary) and n.op in _SIDE_EFFECT_OPS:
            return True
        if isinstance(n, A.Call) and (n.target is not None or n.func.startswith("atomic")):
            return True
        if isinstance(n, A.Call) and n.func.startswith("curand"):
            return True
    return False


class _Builder:
    def __init__(self, loc, wide: bool) -> None:
        self.loc, self.wide = loc, wide
        self.real = _F64 if wide else _F32
        self.vec = DOUBLE2 if wide else FLOAT2

    def lane(self, e: A.Expr, f: str) -> A.Expr:
        base = e.ty.base if isinstance(e.ty, A.VectorType) else self.real
        return A.Member(loc=self.loc, base=e, field=f, ty=base)

    def re(self, e: A.Expr) -> A.Expr:
        return self.lane(e, "x")

    def im(self, e: A.Expr) -> A.Expr:
        return self.lane(e, "y")

    def bin(self, op: str, a: A.Expr, b: A.Expr) -> A.Expr:
        return A.Binary(loc=self.loc, op=op, left=a, right=b, ty=self.real)

    def neg(self, a: A.Expr) -> A.Expr:
        return A.Unary(loc=self.loc, op="-", operand=a, ty=self.real)

    def lit(self, v: float) -> A.Expr:
        return A.FloatLit(loc=self.loc, value=v, ty=self.real)

    def call(self, func: str, *args: A.Expr) -> A.Expr:
        return A.Call(loc=self.loc, func=func, args=args, ty=self.real)

    def make(self, r: A.Expr, i: A.Expr, vec: A.VectorType | None = None) -> A.Expr:
        vec = vec or self.vec
        return A.Call(loc=self.loc, func=f"make_{vec.name}", args=(r, i), ty=vec)

    def cast(self, e: A.Expr, to: A.ScalarType) -> A.Expr:
        return A.Cast(loc=self.loc, to=to, operand=e, kind="c", ty=to)


def _div(b: _Builder, x: A.Expr, y: A.Expr) -> A.Expr:
    """The header's quotient: both operands scaled by ``1 / (|y.re| + |y.im|)`` first."""
    fabs = "fabs" if b.wide else "fabsf"
    s = b.bin("+", b.call(fabs, b.re(y)), b.call(fabs, b.im(y)))
    oos = b.bin("/", b.lit(1.0), s)
    ars, ais = b.bin("*", b.re(x), oos), b.bin("*", b.im(x), oos)
    brs, bis = b.bin("*", b.re(y), oos), b.bin("*", b.im(y), oos)
    s2 = b.bin("+", b.bin("*", brs, brs), b.bin("*", bis, bis))
    oos2 = b.bin("/", b.lit(1.0), s2)
    re = b.bin("*", b.bin("+", b.bin("*", ars, brs), b.bin("*", ais, bis)), oos2)
    im = b.bin("*", b.bin("-", b.bin("*", ais, brs), b.bin("*", ars, bis)), oos2)
    return b.make(re, im)


def _fma(b: _Builder, x: A.Expr, y: A.Expr, d: A.Expr) -> A.Expr:
    re = b.bin("+", b.bin("*", b.re(x), b.re(y)), b.re(d))
    im = b.bin("+", b.bin("*", b.re(x), b.im(y)), b.im(d))
    re = b.bin("+", b.neg(b.bin("*", b.im(x), b.im(y))), re)
    im = b.bin("+", b.bin("*", b.im(x), b.re(y)), im)
    return b.make(re, im)


_BODIES: dict[str, Callable[..., A.Expr]] = {
    "creal": lambda b, x: b.re(x),
    "cimag": lambda b, x: b.im(x),
    "make": lambda b, r, i: b.make(b.cast(r, b.real), b.cast(i, b.real)),
    "conj": lambda b, x: b.make(b.re(x), b.neg(b.im(x))),
    "add": lambda b, x, y: b.make(b.bin("+", b.re(x), b.re(y)), b.bin("+", b.im(x), b.im(y))),
    "sub": lambda b, x, y: b.make(b.bin("-", b.re(x), b.re(y)), b.bin("-", b.im(x), b.im(y))),
    "mul": lambda b, x, y: b.make(
        b.bin("-", b.bin("*", b.re(x), b.re(y)), b.bin("*", b.im(x), b.im(y))),
        b.bin("+", b.bin("*", b.re(x), b.im(y)), b.bin("*", b.im(x), b.re(y))),
    ),
    "div": _div,
    "abs": lambda b, x: b.call("hypot" if b.wide else "hypotf", b.re(x), b.im(x)),
    "fma": _fma,
    "to_float": lambda b, x: b.make(b.cast(b.re(x), _F32), b.cast(b.im(x), _F32), FLOAT2),
    "to_double": lambda b, x: b.make(b.cast(b.re(x), _F64), b.cast(b.im(x), _F64), DOUBLE2),
}


_STEMS = {
    "cuCreal": "creal",
    "cuCimag": "cimag",
    "cuConj": "conj",
    "cuCadd": "add",
    "cuCsub": "sub",
    "cuCmul": "mul",
    "cuCdiv": "div",
    "cuCabs": "abs",
    "cuCfma": "fma",
    "cuComplexDoubleToFloat": "to_float",
    "cuComplexFloatToDouble": "to_double",
}


def _kind(name: str) -> str:
    if name.startswith("make_"):
        return "make"
    stem = name[:-1] if name in _FLOAT_NAMES and name.endswith("f") else name
    return _STEMS[stem]


def complex_call(
    name: str, args: list[A.Expr], loc, temp: Callable[[int, A.CType], A.Name] | None = None
) -> A.Expr:
    """The expression ``name(args...)`` stands for (raises :class:`ComplexCallError`).
    ``temp(i, type)``: a new local for argument ``i`` when it has side effects."""
    wide = name in _DOUBLE_NAMES
    arity = (_DOUBLE_NAMES if wide else _FLOAT_NAMES)[name]
    if len(args) != arity:
        raise ComplexCallError(f"'{name}' with {len(args)} arguments")
    kind = _kind(name)
    if kind != "make":
        for a in args:
            t = a.ty
            if not (isinstance(t, A.VectorType) and t.width == 2 and t.base.is_float):
                raise ComplexCallError(f"'{name}' of a value that is not a complex number")
    if kind in ("creal", "cimag", "make", "to_float", "to_double") or not any(map(_impure, args)):
        return _BODIES[kind](_Builder(loc, wide), *args)
    if temp is None:
        raise ComplexCallError(f"'{name}' of an argument with side effects")
    firsts: list[A.Expr] = []
    once: list[A.Expr] = []
    for i, a in enumerate(args):
        if _impure(a):
            t = temp(i, a.ty)
            firsts.append(A.Assign(loc=loc, op="=", target=t, value=a, ty=a.ty))
            a = t
        once.append(a)
    body = _BODIES[kind](_Builder(loc, wide), *once)
    return A.Comma(loc=loc, exprs=(*firsts, body), ty=body.ty)
