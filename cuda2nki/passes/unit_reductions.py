"""``unit-reductions``: a reduction over axes of extent 1 is its body at index 0.

A block-wide reduction written for any block size lifts to nested reductions whose outer level
runs over the warps of the block (``blockDim.x / 32``) or the rows a warp strides by; launched
with one warp, that level has one trip.  Left in, the outer reduction hides the real one from
the layouts (a column sum nested inside a one-element sum goes to a per-thread layout), and the
second stage's guard (``lane < num_warps ? partial[lane] : 0``) stays a select on a comparison
of two constants.

Before::  dbias[i] = reduce(add, j < 1: select(index(0) == index(j), reduce(add, k < N: x[k, i]), nan))
After::   dbias[i] = reduce(add, k < N: x[k, i])

The body takes the axis's only value, 0; the result keeps the reduction's accumulator dtype (a
cast where the body's differs); a comparison of two constant index values is decided and a
select on a decided condition is the chosen operand.  Unit axes beside others are dropped the same way; a masked reduction (``where``) over only
unit axes is kept.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, ClassVar

from cuda2nki.ir.nodes import (
    Binary,
    Cast,
    Const,
    Expr,
    IndexValue,
    Kernel,
    Lit,
    Reduce,
    Select,
    Sym,
)
from cuda2nki.ir.ops import Op
from cuda2nki.ir.types import TypeEnv
from cuda2nki.passes._analysis import transform
from cuda2nki.passes.base import Pass, PassContext, map_computes
from cuda2nki.rewrite import transform as transform_all

_COMPARE = {
    Op.EQ: operator.eq,
    Op.NE: operator.ne,
    Op.LT: operator.lt,
    Op.LE: operator.le,
    Op.GT: operator.gt,
    Op.GE: operator.ge,
}


@dataclass(frozen=True)
class UnitReductionsPass(Pass):
    name: ClassVar[str] = "unit-reductions"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        env = TypeEnv(kernel)
        return map_computes(kernel, lambda e: unfold(e, env))


def unfold(e: Expr, env: TypeEnv) -> Any:
    """``e`` with every unmasked reduction over one element replaced by that element."""

    def fn(x: Any) -> Any:
        if isinstance(x, Reduce):
            return _single(x, env)
        if isinstance(x, Binary) and x.op in _COMPARE:
            return _decided(x)
        if isinstance(x, Select) and isinstance(x.cond, Lit) and x.cond.dtype == "bool":
            return x.a if x.cond.value else x.b
        return x

    return transform(e, fn)


def _single(r: Reduce, env: TypeEnv) -> Expr:
    keep = tuple(a for a in r.axes if a.extent != Const(1))
    if len(keep) == len(r.axes) or (not keep and r.where is not None):
        return r
    names = {a.name for a in r.axes if a not in keep}

    def at_zero(x: Any) -> Any:
        return Const(0) if isinstance(x, Sym) and x.name in names else x

    body = unfold(transform_all(r.body, at_zero), env)
    if keep:  # the other axes still reduce
        where = None if r.where is None else unfold(transform_all(r.where, at_zero), env)
        return r.replace(axes=keep, body=body, where=where)
    if r.acc_dtype is not None and _dtype(body, env) != r.acc_dtype:
        return Cast(r.acc_dtype, body, loc=r.loc)
    return body


def _dtype(e: Expr, env: TypeEnv) -> str | None:
    try:
        return env.dtype_of(e)
    except (TypeError, ValueError, KeyError):
        return None


def _decided(b: Binary) -> Expr:
    """A comparison of two constant index values, as a boolean literal."""
    sides = [_constant(x) for x in (b.a, b.b)]
    if None in sides:
        return b
    return Lit(bool(_COMPARE[b.op](*sides)), "bool", loc=b.loc)


def _constant(x: Expr) -> int | None:
    if not isinstance(x, IndexValue) or x.expr.free_syms():
        return None
    try:
        return int(x.expr.evaluate({}))
    except (TypeError, ValueError, ZeroDivisionError):
        return None
