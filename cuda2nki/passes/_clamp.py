"""Clamped (replicated-edge) reads: ``select(i - 1 >= 0, x[i - 1], x[0])`` is ``x[max(i - 1, 0)]``.

A CUDA stencil that clamps its neighbour indices into the grid (``max(r - 1, 0)``,
``min(c + 1, cols - 1)``, ``r > 0 ? r - 1 : 0``, ``r == 0 ? 0 : r - 1``) lifts to a choice
between two reads of one tensor that differ in one index: the neighbour where it is inside the
bounds, the edge element where it is not.  As one read whose index is clamped (IR ``Max`` /
``Min`` around the affine index), the lowering loads one tile per tap -- the positions inside
the tensor by one DMA, the clamped edge copied from the tile's own edge -- instead of the
neighbour and the edge row as two tiles and a select (or a statement per edge region).
Not a pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cuda2nki.ir.nodes import (
    Binary,
    Const,
    Dyn,
    Expr,
    IndexValue,
    Lit,
    Max,
    Min,
    Param,
    Read,
    Select,
    SizeExpr,
    Sym,
)
from cuda2nki.ir.ops import Op
from cuda2nki.passes._index import affine1
from cuda2nki.passes.fold_sizes import fold_size


@dataclass(frozen=True)
class Clamped:
    """An index ``min(max(inner, lo), hi)`` (either bound may be absent; ``hi`` inclusive)."""

    inner: SizeExpr
    lo: SizeExpr | None = None
    hi: SizeExpr | None = None


def unclamp(ix: SizeExpr, axes: frozenset[str]) -> Clamped:
    """``ix`` as a clamped index: its ``Max``/``Min`` with bounds free of ``axes`` taken off (an
    index without them is its own ``inner``)."""
    lo = hi = None
    while isinstance(ix, Max | Min) and not ix.b.free_syms() & axes:
        if isinstance(ix, Max) and lo is None:
            lo, ix = ix.b, ix.a
        elif isinstance(ix, Min) and hi is None:
            hi, ix = ix.b, ix.a
        else:
            break
    return Clamped(ix, lo, hi)


def is_clamped(ix: SizeExpr, axes: frozenset[str]) -> bool:
    c = unclamp(ix, axes)
    return (c.lo is not None or c.hi is not None) and bool(c.inner.free_syms() & axes)


def clamped_read(sel: Select, extents: Mapping[str, SizeExpr]) -> Read | None:
    """``sel`` -- a choice between ``x[.., e, ..]`` and ``x[.., B, ..]`` (``e`` affine in one of
    the domain axes ``extents``, ``B`` free of them) whose condition is ``e >= B`` (or
    ``e <= B``, either way round, or the equality that is its only failing case) -- as the read
    ``x[.., max(e, B), ..]`` (``min``); None if it is not one."""
    a, b = sel.a, sel.b
    if not (isinstance(a, Read) and isinstance(b, Read) and a.tensor == b.tensor):
        return None
    if len(a.index) != len(b.index):
        return None
    diff = [d for d, (x, y) in enumerate(zip(a.index, b.index)) if x != y]
    if len(diff) != 1:
        return None
    (d,) = diff
    axes = frozenset(extents)
    for near, edge, swapped in ((a, b, False), (b, a, True)):
        e, bound = near.index[d], edge.index[d]
        if bound.free_syms() & axes or isinstance(bound, Dyn):
            continue
        inner = unclamp(e, axes).inner
        at = affine1(inner, axes)
        if at is None or at.axis is None or at.k != 1:
            continue
        side = _side(sel.cond, inner, bound, swapped, at, extents)
        if side is None:
            continue
        ix = Max(e, bound) if side == "lo" else Min(e, bound)
        return Read(near.tensor, (*near.index[:d], ix, *near.index[d + 1 :]), loc=near.loc)
    return None


def _side(cond: Expr, e: SizeExpr, bound: SizeExpr, swapped: bool, at, extents) -> str | None:
    """ "lo" where ``cond`` picks ``x[e]`` exactly when ``e >= bound`` (``swapped``: picks the
    edge exactly when ``e < bound``), "hi" for ``e <= bound`` (``e > bound``), else None."""
    if not isinstance(cond, Binary):
        return None
    left, right = _operand(cond.a), _operand(cond.b)
    if left is None or right is None:
        return None
    if cond.op == Op.EQ and swapped:
        # the edge where e is one past it, the only failing value on the axis: e == B - 1 at
        # the axis' first point (i == 0), e == B + 1 at its last
        for p, q in ((left, right), (right, left)):
            if _zero(p - q - (e - bound + Const(1))) and _zero(at.c - (bound - Const(1))):
                return "lo"
            if _zero(p - q - (e - bound - Const(1))):
                last = extents[at.axis] - Const(1) + at.c
                if _zero(last - (bound + Const(1))):
                    return "hi"
        return None
    # the condition as ``P >= 0`` over the integers
    if cond.op == Op.LT:
        p = right - left - Const(1)
    elif cond.op == Op.LE:
        p = right - left
    elif cond.op == Op.GT:
        p = left - right - Const(1)
    elif cond.op == Op.GE:
        p = left - right
    else:
        return None
    if not swapped:
        if _zero(p - (e - bound)):
            return "lo"
        if _zero(p - (bound - e)):
            return "hi"
        return None
    if _zero(p - (bound - e - Const(1))):  # the edge where e < bound
        return "lo"
    if _zero(p - (e - bound - Const(1))):  # the edge where e > bound
        return "hi"
    return None


def _operand(x: Expr) -> SizeExpr | None:
    if isinstance(x, IndexValue):
        return x.expr
    if isinstance(x, Lit) and isinstance(x.value, int) and not isinstance(x.value, bool):
        return Const(int(x.value))
    if isinstance(x, Param):
        return Sym(x.name)
    return None


def _zero(e: SizeExpr) -> bool:
    return fold_size(e) == Const(0)
