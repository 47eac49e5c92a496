"""Constant folding with C semantics (array sizes, case labels, template arguments)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.typesys import FLT_EPSILON, FLT_MAX, FLT_MIN, named_type


def convert(v: int | float, ty: A.CType | None) -> int | float:
    if not isinstance(ty, A.ScalarType):
        return v
    if ty.is_float:
        return float(v)
    if ty.name == "bool":
        return int(bool(v))
    iv = int(v)
    bits = ty.bits
    iv &= (1 << bits) - 1
    if ty.is_signed and iv >= 1 << (bits - 1):
        iv -= 1 << bits
    return iv


def fold_binary(op: str, a: int | float, b: int | float, ty: A.CType | None) -> int | float | None:
    isf = isinstance(ty, A.ScalarType) and ty.is_float
    try:
        if op == "+":
            r = a + b
        elif op == "-":
            r = a - b
        elif op == "*":
            r = a * b
        elif op == "/":
            if b == 0:
                return None
            r = a / b if isf else int(a / b) if abs(a) < 2**52 and abs(b) < 2**52 else cdiv(a, b)
        elif op == "%":
            if b == 0 or isf:
                return None
            r = a - b * (int(a / b) if abs(a) < 2**52 else cdiv(a, b))
        elif op == "<<":
            r = int(a) << int(b)
        elif op == ">>":
            r = int(a) >> int(b)
        elif op == "&":
            r = int(a) & int(b)
        elif op == "|":
            r = int(a) | int(b)
        elif op == "^":
            r = int(a) ^ int(b)
        elif op in ("<", "<=", ">", ">=", "==", "!="):
            r = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[op]
            return int(r)
        elif op == "&&":
            return int(bool(a) and bool(b))
        elif op == "||":
            return int(bool(a) or bool(b))
        else:
            return None
    except (OverflowError, ValueError):
        return None
    return convert(r, ty)


def cdiv(a: int | float, b: int | float) -> int:
    q = abs(int(a)) // abs(int(b))
    return q if (a >= 0) == (b >= 0) else -q


def numeric_limit(
    text: str, resolve: Callable[[str], A.CType | None] | None = None
) -> Callable[[SourceLoc], A.Expr] | None:
    """``std::numeric_limits<float>::max()`` and friends as literals.  ``resolve``: the type a
    name that is no built-in type stands for (a template parameter, a typedef), or None."""
    m = re.search(r"numeric_limits<([\w ]+)>::(\w+)", text.replace("(", "").replace(")", ""))
    if not m:
        return None
    name = m.group(1).strip()
    t = named_type(name)
    if t is None and resolve is not None:
        t = resolve(name)
    if not isinstance(t, A.ScalarType):
        return None
    what = m.group(2)
    if t.is_float:
        limits = _FLOAT_LIMITS.get(t.name)
        if limits is None or what not in limits:
            return None
        v = limits[what]
        return lambda loc: A.FloatLit(loc=loc, value=v, ty=t)
    bits = 8 if t.name == "bool" else t.bits
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if t.is_signed else (0, 2**bits - 1)
    if t.name == "bool":
        lo, hi = 0, 1
    vals_i = {"max": hi, "min": lo, "lowest": lo}
    if what not in vals_i:
        return None
    iv = vals_i[what]
    return lambda loc: A.IntLit(loc=loc, value=iv, ty=t)


_INF, _NAN = float("inf"), float("nan")
_FLOAT_LIMITS: dict[str, dict[str, float]] = {
    "float32": {
        "max": FLT_MAX,
        "min": FLT_MIN,
        "lowest": -FLT_MAX,
        "epsilon": FLT_EPSILON,
        "infinity": _INF,
        "quiet_NaN": _NAN,
    },
    "float64": {
        "max": sys.float_info.max,
        "min": sys.float_info.min,
        "lowest": -sys.float_info.max,
        "epsilon": sys.float_info.epsilon,
        "infinity": _INF,
        "quiet_NaN": _NAN,
    },
    "float16": {
        "max": 65504.0,
        "min": 6.103515625e-05,
        "lowest": -65504.0,
        "epsilon": 0.0009765625,
        "infinity": _INF,
        "quiet_NaN": _NAN,
    },
}
