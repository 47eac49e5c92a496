"""Nested reductions over the two coordinates of one thread index (not a pass).

A block reduced through warp shuffles and a shared array of per-warp results lifts to two nested
reductions, over the warp ``j < W`` and the lane ``k < 32``, whose body reads only at
``k + 32 * j`` (the thread's position in the block). The pair visits every thread index once:
it is one reduction over ``m < 32 * W`` reading at ``m``, which the row layouts tile.

Before::  reduce(add, j < 8: reduce(add, k < 32: x[k + 32 * j + 256 * i]))
After::   reduce(add, k < 256: x[k + 256 * i])

Only reductions with one op (add, max, min), no mask on either level, a constant inner extent and
a body in which every index that mentions ``j`` or ``k`` is linear with the coefficient of ``j``
equal to the inner extent times that of ``k`` are merged. A sum is then added in another order
than the CUDA tree did (rounding only).
"""

from __future__ import annotations

from cuda2nki.ir.nodes import Axis, Const, Dyn, Expr, IndexValue, Read, Reduce, SizeExpr, Sym
from cuda2nki.ir.ops import Op
from cuda2nki.passes._analysis import moves_along, transform
from cuda2nki.passes._index import linear, plus
from cuda2nki.rewrite import nodes

_OPS = (Op.ADD, Op.MAX, Op.MIN)


class _Mixed(Exception):
    """An index uses the two coordinates other than through their combination."""


def merge_thread_axes(e: Expr) -> Expr:
    """``e`` with every (warp, lane) pair of nested reductions merged into one."""
    return transform(e, lambda x: _merge(x) if isinstance(x, Reduce) else x)


def _merge(r: Reduce) -> Reduce:
    inner = r.body
    if not _single(r) or not isinstance(inner, Reduce) or not _single(inner):
        return r
    if inner.op != r.op or inner.acc_dtype != r.acc_dtype:
        return r
    (outer_ax,), (inner_ax,) = r.axes, inner.axes
    width = inner_ax.extent
    j, k = outer_ax.name, inner_ax.name
    if not isinstance(width, Const) or width.value < 1 or {j, k} & outer_ax.extent.free_syms():
        return r
    try:
        body = _rewrite(inner.body, j, k, width.value)
    except _Mixed:
        return r
    merged = inner_ax.replace(extent=_times(outer_ax.extent, width.value))
    return inner.replace(axes=(merged,), body=body)


def _single(r: Reduce) -> bool:
    return len(r.axes) == 1 and r.where is None and r.op in _OPS


def _rewrite(e: Expr, j: str, k: str, width: int) -> Expr:
    def fix(x):
        if isinstance(x, Read):
            return x.replace(index=tuple(_index(ix, j, k, width) for ix in x.index))
        if isinstance(x, IndexValue):
            return x.replace(expr=_index(x.expr, j, k, width))
        if isinstance(x, Axis) and {j, k} & x.extent.free_syms():
            raise _Mixed
        return x

    return transform(e, fix, skip=(SizeExpr,))


def _index(ix: SizeExpr, j: str, k: str, width: int) -> SizeExpr:
    """``a * j + b * k + c`` with ``a == width * b`` as ``b * k + c`` (``k`` the merged axis)."""
    if any(isinstance(d, Dyn) and {j, k} & moves_along(d.expr) for d in nodes(ix)):
        raise _Mixed  # a data-dependent position computed from the coordinates
    if not {j, k} & ix.free_syms():
        return ix
    lin = linear(ix, frozenset((j, k)))
    if lin is None:
        raise _Mixed
    cj, ck = lin.get(j, Const(0)), lin.get(k, Const(0))
    if not (isinstance(cj, Const) and isinstance(ck, Const)) or cj.value != width * ck.value:
        raise _Mixed
    rest = lin.get(None, Const(0))
    term = Sym(k) if ck.value == 1 else Const(ck.value) * Sym(k)
    return plus(rest, term) if rest != Const(0) else term


def _times(extent: SizeExpr, width: int) -> SizeExpr:
    if isinstance(extent, Const):
        return Const(extent.value * width)
    return Const(width) * extent
