"""Constant folding with C semantics (array sizes, case labels, template arguments)."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.typesys import named_type


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


def numeric_limit(text: str) -> Callable[[SourceLoc], A.Expr] | None:
    """``std::numeric_limits<float>::max()`` and friends as literals."""
    m = re.search(r"numeric_limits<([\w ]+)>::(\w+)", text.replace("(", "").replace(")", ""))
    if not m:
        return None
    t = named_type(m.group(1).strip())
    if not isinstance(t, A.ScalarType):
        return None
    what = m.group(2)
    if t.is_float:
        dt = {"float32": np.float32, "float64": np.float64, "float16": np.float16}.get(t.name)
        if dt is None:
            return None
        fi = np.finfo(dt)
        vals = {
            "max": float(fi.max),
            "min": float(fi.tiny),
            "lowest": float(-fi.max),
            "epsilon": float(fi.eps),
            "infinity": float("inf"),
            "quiet_NaN": float("nan"),
        }
        if what not in vals:
            return None
        v = vals[what]
        return lambda loc: A.FloatLit(loc=loc, value=v, ty=t)
    ii = np.iinfo({"bool": np.int8}.get(t.name, getattr(np, t.name)))
    vals_i = {"max": int(ii.max), "min": int(ii.min), "lowest": int(ii.min)}
    if what not in vals_i:
        return None
    iv = vals_i[what]
    return lambda loc: A.IntLit(loc=loc, value=iv, ty=t)
