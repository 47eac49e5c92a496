"""Rounding intrinsics and correctly rounded arithmetic in the literal lowering.

* ``rintf``/``nearbyintf`` (and the double spellings): to the nearest integer, halfway cases to
  the even one.  NKI has no such instruction: with ``f = floor(|x|)`` and the exact fraction
  ``d = |x| - f``, the result is ``f + (d > 1/2) + (d == 1/2) * (f odd)`` with the sign of
  ``x``; a magnitude of 2**23 or more is an integer already (and infinities stay).
* ``__float2int_rn/_rd/_ru/_rz`` and their ``uint``/``double`` kin: that rounding, then C's
  conversion of the integral value.
* ``__saturatef(x)``: ``x`` clamped to [0, 1], NaN to 0.
* ``__fadd_rn``, ``__fsub_rn``, ``__fmul_rn``, ``__frcp_rn`` (and ``__d..._rn``): the plain
  IEEE operation (round to nearest even), which is what the engines compute in fp32.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.values import Tile, Uni, Value

if TYPE_CHECKING:
    from cuda2nki.lift.literal.lower import Lowerer

_EVEN = {"rintf", "rint", "nearbyintf", "nearbyint"}
_MODES = {"rn": "rint", "rd": "floor", "ru": "ceil", "rz": "trunc"}
#: conversion to an integer type -> the rounding applied first
TO_INT: dict[str, str] = {
    f"__{src}2{dst}_{mode}": how
    for src in ("float", "double")
    for dst in ("int", "uint")
    for mode, how in _MODES.items()
}
_ARITH = {"add": "+", "sub": "-", "mul": "*"}
#: correctly rounded arithmetic -> C operator (``None``: the reciprocal)
EXACT_OPS: dict[str, str | None] = {
    f"__{p}{op}_rn": sym for p in ("f", "d") for op, sym in _ARITH.items()
}  # fmt: skip
EXACT_OPS.update({"__frcp_rn": None, "__drcp_rn": None})
_NUMPY = {"rint": "np.rint", "floor": "np.floor", "ceil": "np.ceil", "trunc": "np.trunc"}
_2P23 = "8388608.0"
_I32 = {"int32", "uint32"}


def handles(func: str, arity: int, ty: object) -> bool:
    """Whether this module lowers ``func`` called with ``arity`` arguments, result type ``ty``."""
    if func in EXACT_OPS:
        return arity == (1 if EXACT_OPS[func] is None else 2)
    if func in TO_INT:
        return arity == 1 and isinstance(ty, A.ScalarType) and ty.name in _I32
    return arity == 1 and func in (_EVEN | {"__saturatef"})


def lower_call(low: Lowerer, e: A.Call, args: list[Value]) -> Value:
    """``e`` (a call :func:`handles` accepts) of the lowered ``args``."""
    f = e.func
    if f in EXACT_OPS:
        sym = EXACT_OPS[f]
        if sym is None:
            return low.arith("/", Uni("1.0", "float"), args[0], e.ty, e)
        return low.arith(sym, args[0], args[1], e.ty, e)
    if f == "__saturatef":
        return _saturate(low, args[0], e)
    rounded = _rounded(low, TO_INT.get(f, "rint"), args[0], e)
    return low.convert(rounded, e.ty, e) if f in TO_INT else rounded


def _rounded(low: Lowerer, how: str, v: Value, e: A.Call) -> Value:
    if isinstance(v, Uni):
        return Uni(f"np.float32({_NUMPY[how]}(np.float32({v.expr})))", "float")
    x = low.full_tile(v, "float", e)
    if how != "rint":
        return Tile(low.op(how, [x], "float").expr, "float")
    return Tile(_rint(low, x, e), "float")


def _rint(low: Lowerer, x: str, e: A.Call) -> str:
    def op(name: str, *a: str) -> str:
        return low.op(name, list(a), "float").expr

    ax = op("abs", x)
    f = op("floor", ax)
    d = op("subtract", ax, f)
    odd = op("subtract", f, op("multiply", op("floor", op("multiply", f, "0.5")), "2.0"))
    up = op("add", op("greater", d, "0.5"), op("multiply", op("equal", d, "0.5"), odd))
    r = _where(low, op("greater_equal", ax, _2P23), ax, op("add", f, up), e)
    neg = op("maximum", op("less", x, "0.0"), op("less", op("divide", "1.0", x), "0.0"))
    return _where(low, neg, op("negative", r), r, e)  # -0 and -0.25 round to -0


def _saturate(low: Lowerer, v: Value, e: A.Call) -> Value:
    if isinstance(v, Uni):
        x = f"np.float32({v.expr})"
        return Uni(f"np.float32(0.0 if np.isnan({x}) else min(max({x}, 0.0), 1.0))", "float")
    x = low.full_tile(v, "float", e)
    clamped = low.op("minimum", [low.op("maximum", [x, "0.0"], "float").expr, "1.0"], "float")
    zero = low.full_tile(Uni("0.0", "float"), "float", e)
    nan = low.op("not_equal", [x, x], "float").expr
    return Tile(_where(low, nan, zero, clamped.expr, e), "float")


def _where(low: Lowerer, mask: str, a: str, b: str, e: A.Call) -> str:
    dst = low.fresh("s")
    low.emit("where", e.loc.line, dst=dst, mask=mask, a=a, b=b, dtype="nl.float32")
    return dst


__all__ = ["EXACT_OPS", "TO_INT", "handles", "lower_call"]
