"""Helpers shared by the ``lower-tiles`` families: a statement's axes and row extent, size
parameters, reductions and guards, tile capacities, and the row and epilogue tile compilers.
"""

from __future__ import annotations

from cuda2nki.ir.nodes import (
    Axis,
    Compute,
    Const,
    IndexValue,
    Kernel,
    Lit,
    Memset,
    Min,
    Reduce,
    Scan,
    SizeExpr,
    Slice,
    TensorCopy,
    TensorScan,
    View,
)
from cuda2nki.passes import _tiles as T
from cuda2nki.passes._analysis import attrs, moves_along
from cuda2nki.rewrite import nodes


def _axis(c: Compute, name: str):
    for ax in c.domain.axes:
        if ax.name == name:
            return ax
    raise KeyError(name)


def _p_axis(c: Compute):
    return _axis(c, attrs(c).get("p_axis") or c.domain.axes[0].name)


def _outer(c: Compute) -> tuple:
    names = [n for n in attrs(c).get("outer", "").split(",") if n]
    return tuple(_axis(c, n) for n in names)


class _RowCompiler(T.TileExprCompiler):
    """Row-group compiler: reductions and prefix scans along the free axis are allowed."""

    spawn = None

    def _compile(self, e):  # type: ignore[override]
        if isinstance(e, Reduce):
            moves = moves_along(e.body)
            if e.axes[0].name not in self.index_map and (
                self.f_axis in moves or (not self.f_axis and moves & set(self.index_map))
            ):
                return self.loop_reduce(e)
            if e.axes[0].name != self.f_axis and self.spawn is not None:
                return self.spawn(e.axes[0]).reduce_of(e)
            return self.reduce_of(e)
        if isinstance(e, Scan):
            return self.scan_rows(e)
        return super()._compile(e)

    def scan_rows(self, s: Scan) -> T.Val:
        body = self.as_full(self.compile(s.body))
        ident = Lit(float(s.op.info.identity), "float32")
        inc = self.tile("scan", T.FULL, "float32")
        self.b.emit(TensorScan(inc, body.operand, s.op, ident, loc=s.loc))
        if not s.exclusive:
            return T.Val(T.FULL, inc)
        # exclusive: shift the inclusive scan one element along the row, identity first
        exc = self.tile("excl", T.FULL, "float32")
        first = View(exc.tensor, (Slice(0, self.rows), Slice(0, 1)))
        self.b.emit(Memset(first, ident, loc=s.loc))
        rest = View(exc.tensor, (Slice(0, self.rows), Slice(1, self.cols - 1)))
        prev = View(inc.tensor, (Slice(0, self.rows), Slice(0, self.cols - 1)))
        self.b.emit(TensorCopy(rest, prev, loc=s.loc))
        return T.Val(T.FULL, exc)


def size_params(kernel: Kernel) -> frozenset[str]:
    """Scalar parameters that size a tensor or a domain (sizes: below 2**24, like indices)."""
    out: set[str] = set()
    for t in kernel.tensors.values():
        for d in t.shape:
            out |= d.free_syms()

    for x in nodes(kernel.body, skip=(SizeExpr,)):
        if isinstance(x, Axis):
            out.update(x.extent.free_syms())
    return frozenset(out & set(kernel.scalars))


def itemsize(dtype: str) -> int:
    import numpy as np

    from cuda2nki.ir.types import np_dtype

    return int(np.dtype(np_dtype(dtype)).itemsize)


def _uses_index_value(c: Compute) -> bool:
    """An index value that moves with the statement's axes (an element's position): the flat
    layouts keep it on a fixed width.  One of scalar parameters only (``(float) n``) does not
    count."""
    from cuda2nki.passes._analysis import walk

    exprs = [c.expr] + ([c.domain.guard] if c.domain.guard is not None else [])
    found = [x for e in exprs for x in walk(e)]
    axes = set(c.domain.names)
    axes.update(a.name for x in found if isinstance(x, Reduce) for a in x.axes)
    return any(isinstance(x, IndexValue) and x.expr.free_syms() & axes for x in found)


def _cap(e) -> int | None:
    """The allocation size of a (possibly ragged) tile extent: ``min(128, R - r0)`` -> 128."""
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Min):
        for x in (e.a, e.b):
            if isinstance(x, Const):
                return x.value
    return None


def _free_extent(group: list[Compute]):
    for c in group:
        if len(c.domain.axes) - len(_outer(c)) == 2:
            return c.domain.axes[-1].extent
        for node in _reduces(c.expr):
            return node.axes[0].extent
    return None


def _reduces(e):
    from cuda2nki.passes._analysis import reductions

    return reductions(e)


def _guarded(c: Compute):
    if c.domain.guard is None:
        return c.expr
    raise T.Unsupported("a guard that is not implied by the domain", c.loc)


class _EpilogueCompiler(T.TileExprCompiler):
    """Compiles what surrounds a reduction: the reduction itself is the tile ``acc``."""

    result: Reduce
    acc: View
    kind: str = T.FULL
    #: several reductions (a column layout): each one's tile
    others: dict | None = None

    def _compile(self, e):  # type: ignore[override]
        if e is self.result or e == self.result:
            return T.Val(self.kind if self.acc.dims[1:] != (Slice(0, 1),) else T.ROW, self.acc)
        acc = self.others.get(e) if self.others and isinstance(e, Reduce) else None
        if acc is not None:
            return T.Val(self.kind if acc.dims[1:] != (Slice(0, 1),) else T.ROW, acc)
        return super()._compile(e)
