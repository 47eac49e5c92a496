"""A matmul operand stored ``[X, K]`` transposed onto the contraction's partitions from wide rows.

The tensor engine contracts over partitions, so an operand stored with the contraction axis
last (``inp[BT, C]`` of a linear layer, ``weight[OC, C]`` read as ``weight^T``) is transposed
128 columns at a time.  Loading each ``[xs, 128]`` piece by its own DMA moves at most 512 B (fp32)
per partition row, and the last piece of a short contraction only ``K % 128`` columns.  Instead
the block's rows are loaded ``ROW_CHUNK`` columns at a time (one DMA for any ``K`` up to it) and
the pieces are transposed from that tile::

    for q < ceil(K / ROW_CHUNK):
        rows = o[x0 : x0 + xs, q0 : q0 + qs]            (one DMA, qs * itemsize B per row)
        for kk < ceil(qs / 128):
            dst(k tile q * ROW_CHUNK / 128 + kk) = transpose(rows[:, 128 kk : 128 kk + ks])

``ROW_CHUNK`` columns per partition bound the staging tile (8 KiB of fp32), whatever ``K`` is.
"""

from __future__ import annotations

from collections.abc import Callable

from cuda2nki.ir.nodes import (
    Alloc,
    At,
    CeilDiv,
    Loop,
    Min,
    Read,
    SizeExpr,
    Slice,
    TensorCopy,
    TensorTranspose,
    View,
)
from cuda2nki.ir.ops import Buffer
from cuda2nki.passes import _tiles as T
from cuda2nki.passes._analysis import sym_names
from cuda2nki.passes._index import plus

#: contraction columns loaded per DMA of a transposed operand's rows (a multiple of 128)
ROW_CHUNK = 2048


def transposed_rows(
    b: T.Builder,
    o: Read,
    outer: tuple[str, ...],
    axes: tuple[str, str | None],
    K: SizeExpr,
    block: tuple[SizeExpr, SizeExpr],
    dst: Callable[[SizeExpr, SizeExpr], View],
    dtype: str,
    P: int = 128,
) -> None:
    """Fill ``dst(k_tile, ks)`` ([ks, xs], contraction on partitions) for every 128-wide tile of
    the contraction axis ``axes[0]`` from ``o``'s rows ``x0 .. x0 + xs`` along ``axes[1]``
    (``block = (x0, xs)``), loaded ``ROW_CHUNK`` columns per DMA."""
    k, ax = axes
    x0, xs = block
    q, kk = b.fresh("q"), b.fresh("k")
    q0 = T.Const(ROW_CHUNK) * T.Sym(q)
    qs = Min(ROW_CHUNK, K - q0)
    qb = b.nested()
    rows = qb.fresh(f"{o.tensor}_rows")
    qb.emit(Alloc(rows, (xs, qs), dtype, Buffer.SBUF, loc=o.loc))
    sel: dict = {k: Slice(q0, qs)}
    if ax is not None:
        sel[ax] = Slice(x0, xs)
    names = sym_names(o.index) or ()
    src = View(o.tensor, tuple(At(T.Sym(n)) if n in outer else sel[n] for n in names))
    from cuda2nki.ir.nodes import Load

    qb.emit(Load(T.whole(rows, xs, qs), src, loc=o.loc))
    kb = qb.nested()
    k0 = T.Const(P) * T.Sym(kk)
    ks = Min(P, qs - k0)
    tp = kb.fresh(f"{o.tensor}_tp")
    kb.emit(Alloc(tp, (ks, xs), dtype, Buffer.PSUM, loc=o.loc))
    piece = View(rows, (Slice(0, xs), Slice(k0, ks)))
    kb.emit(TensorTranspose(T.whole(tp, ks, xs), piece, loc=o.loc))
    tile = plus(T.Const(ROW_CHUNK // P) * T.Sym(q), T.Sym(kk))
    kb.emit(TensorCopy(dst(tile, ks), T.whole(tp, ks, xs), loc=o.loc))
    qb.emit(Loop(kk, 0, CeilDiv(qs, P), body=tuple(kb.stmts), loc=o.loc))
    b.emit(Loop(q, 0, CeilDiv(K, ROW_CHUNK), body=tuple(qb.stmts), loc=o.loc))
