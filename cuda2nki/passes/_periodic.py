"""Periodic table reads on a flat walk (not a pass).

A 1-D map that reads a small table at its index modulo a constant (``y[k] = x[k] * g[k % C]``,
``g[k & (C - 1)]``, ``g[k % C + c]``) walks its vector in flat chunks whose rows are a multiple
of ``C`` long and start at a multiple of ``C``: element ``k = base + cols * p + f`` of a chunk
then reads ``g[f % C + c]``, the same for every chunk.  The table becomes one ``[rows, C]`` tile
read by one DMA (every partition the same ``C`` elements: a zero partition stride), widened to
the chunk's ``[rows, cols]`` by ``cols / C`` on-chip copies -- not a gather per element.

Before::  y[k] = x[k] * g[k % 16]                    for k < N   (no affine access of g)
After::   flat chunks of [128, 16 * m]; g as Rows(0, 128, 0, 16) copied m times along the row
"""

from __future__ import annotations

from math import lcm

from cuda2nki.ir.nodes import (
    Add,
    Alloc,
    CeilDiv,
    Compute,
    Const,
    Load,
    Loop,
    Max,
    Min,
    Mod,
    Read,
    Rows,
    SizeExpr,
    Slice,
    Sym,
    TensorCopy,
    View,
)
from cuda2nki.ir.ops import Buffer
from cuda2nki.passes import _tiles as T
from cuda2nki.passes._analysis import reads

#: the longest period a table read is widened from (one on-chip copy per period of a row)
PERIOD_MAX = 512


def period_of(rd: Read, i: str, shape) -> tuple[int, Const] | None:
    """``(C, c)`` for a read ``t[i % C + c]`` of a 1-D table holding ``t[c .. c + C - 1]``
    (constant ``C`` and ``c``), else None."""
    if len(rd.index) != 1 or len(shape) != 1:
        return None
    ix, c = rd.index[0], Const(0)
    if isinstance(ix, Add):
        for x, y in ((ix.a, ix.b), (ix.b, ix.a)):
            if isinstance(y, Const) and isinstance(x, Mod):
                ix, c = x, y
                break
    if not (isinstance(ix, Mod) and ix.a == Sym(i) and isinstance(ix.b, Const)):
        return None
    period = ix.b.value
    size = shape[0]
    if not 1 < period <= PERIOD_MAX or c.value < 0:
        return None
    if not isinstance(size, Const) or size.value < c.value + period:
        return None
    return period, c


def statement_period(c: Compute, i: str, kernel) -> int:
    """The least common multiple of the periods of ``c``'s table reads along ``i`` (1: none)."""
    out = 1
    for rd in reads(c.expr):
        decl = kernel.tensors.get(rd.tensor)
        got = period_of(rd, i, decl.shape) if decl is not None else None
        if got is not None:
            out = lcm(out, got[0])
    return out


def chunk_width(f0: int, n: SizeExpr, p: int, period: int) -> SizeExpr:
    """A flat chunk's row length: a multiple of ``period``, at most ``f0`` rounded down to one
    (and at least one period), spread over the partitions for a short vector."""
    most = max(1, f0 // period)
    return Const(period) * Min(Const(most), Max(Const(1), CeilDiv(n, Const(p * period))))


def periodic_tile(b: T.Builder, rd: Read, period: int, c: Const, rows, cols, dtype: str):
    """The ``[rows, cols]`` tile of ``t[f % C + c]`` (rows starting at a multiple of ``C``)."""
    one = b.fresh(f"{rd.tensor}_p")
    b.emit(Alloc(one, (rows, Const(period)), dtype, Buffer.SBUF, loc=rd.loc))
    src = View(rd.tensor, (Rows(c, rows, Const(0), Const(period)),))
    b.emit(Load(T.whole(one, rows, Const(period)), src, loc=rd.loc))
    if cols == Const(period):
        return T.Val(T.FULL, T.whole(one, rows, cols), dtype)
    # whole periods cover the row; a ragged last chunk (cols not a multiple) uses their prefix
    periods = CeilDiv(cols, Const(period))
    wide = b.fresh(f"{rd.tensor}_w")
    b.emit(Alloc(wide, (rows, Const(period) * periods), dtype, Buffer.SBUF, loc=rd.loc))
    j = b.fresh("j")
    dst = View(wide, (Slice(Const(0), rows), Slice(Const(period) * Sym(j), Const(period))))
    copy = TensorCopy(dst, T.whole(one, rows, Const(period)), loc=rd.loc)
    b.emit(Loop(j, Const(0), periods, body=(copy,), loc=rd.loc))
    return T.Val(T.FULL, T.whole(wide, rows, cols), dtype)


class PeriodTables:
    """The widened tables of one flat walk, each built once as a full ``[P, F]`` chunk's tile
    in front of the chunk loops (every chunk starts at a multiple of the period): a chunk of
    ``[rows, cols]`` reads its top-left corner."""

    def __init__(self, b: T.Builder, p: SizeExpr, f: SizeExpr) -> None:
        self.b, self.p, self.f = b, p, f
        self.built: dict[tuple, str] = {}

    def corner(self, rd: Read, table: tuple[int, Const], rows, cols, dtype: str) -> T.Val:
        key = (rd.tensor, table, dtype)
        if key not in self.built:
            full = periodic_tile(self.b, rd, table[0], table[1], self.p, self.f, dtype)
            self.built[key] = full.operand.tensor
        view = View(self.built[key], (Slice(Const(0), rows), Slice(Const(0), cols)))
        return T.Val(T.FULL, view, dtype)
