"""Column sums of a short matrix, folded onto the partitions (part of ``lower-tiles``).

A column sum is a matmul with a ones vector: the rows of a tile are the contraction, on the
partitions.  With fewer rows than partitions (64 rows: half of them idle, and the tensor engine's
array half used) the column blocks are stacked instead: ``G = max(1, 128 // R)`` blocks of ``W``
columns, block ``b`` on partitions ``[b * R, (b + 1) * R)``, and one matmul with a block
indicator ``ind[p, b] = (b * R <= p < (b + 1) * R)`` as the stationary operand sums every block
at once into a ``(G, W)`` PSUM tile whose row ``b`` is block ``b``'s column sums::

    for u < ceil(C / (G * W)):                      # G * W consecutive columns per step
        x[b * R + r, w] = x[r, c0 + b * W + w]       # one DMA per block
        acc[G, W] = ind[G * R, G].T @ f(x)           # one matmul for all the blocks
        y[c0 : c0 + G * W] = epilogue(acc)            # rows of W contiguous sums: one DMA

At sizes where ``R > 64`` the factor is 1 and this is the plain ones-vector sum (more rows
accumulate in PSUM over 128-row tiles).  The fold is chosen where the binding's own sizes give a
factor of 2 or more; the generated code computes the factor from the tensor shapes, so it is
correct at every size.  Each product ``indicator x value`` is exact (a one or a zero times a
finite value), so the sums are those of the ones vector.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cuda2nki.ir.nodes import (
    Alloc,
    CeilDiv,
    Compute,
    Const,
    FloorDiv,
    Iota,
    Lit,
    Load,
    Loop,
    Matmul,
    Max,
    Memset,
    Min,
    Mul,
    Param,
    Read,
    Reduce,
    ScalarDecl,
    SizeExpr,
    Slice,
    Store,
    Sym,
    TensorCopy,
    TensorDecl,
    TensorScalar,
    TensorTensor,
    View,
)
from cuda2nki.ir.ops import Buffer, LoopKind, Op
from cuda2nki.passes import _tiles as T
from cuda2nki.passes._index import BCAST, FULL, ROW, access_class, dims_for
from cuda2nki.passes._merged_rows import merged_class, rows_of


class _NoFold(Exception):
    """The statement has a read the folded layout does not stack: keep the plain layout."""


@dataclass(frozen=True)
class _Fold:
    """The folded layout of one column-sum statement (all sizes are size expressions)."""

    i: str  # the summed (row) axis
    j: str  # the column axis
    R: SizeExpr  # rows
    C: SizeExpr  # columns
    P: int  # partitions of a row tile
    G: SizeExpr  # column blocks stacked on the partitions
    W: SizeExpr  # columns per block
    rows0: SizeExpr  # rows of the first row tile (all of them where G > 1)


def binding_env(lw: Any) -> dict:
    """Sizes at the binding's values: its scalars and its tensor shapes."""
    env = dict(lw.ctx.scalars)
    for t in lw.kernel.params:
        got = lw.ctx.shapes.get(t.name) if isinstance(t, TensorDecl) else None
        for ext, v in zip(t.shape if got else (), got or ()):
            if isinstance(ext, Sym):
                env.setdefault(ext.name, v)
    return env


def plan(lw: Any, c: Compute, red: list, i_ax, j_ax, P: int, TN: int) -> _Fold | None:
    """The folded layout where it applies: sums only, ``y[j]`` of a 1-D output, a row count
    that is a size parameter, and at least two blocks at the binding's sizes."""
    if not all(r.op == Op.ADD and r.where is None for r in red):
        return None
    if c.accumulate is not None or c.target.index != (Sym(j_ax.name),):
        return None
    if len(lw.decl(c.target.tensor).shape) != 1:
        return None
    R = i_ax.extent
    scalars = {p.name for p in lw.kernel.params if isinstance(p, ScalarDecl)}
    if not _size_factors(R) or any(n not in scalars for n in _size_factors(R)):
        return None
    try:
        rows = int(R.evaluate(binding_env(lw)))
    except Exception:  # sizes unknown without a binding
        return None
    if rows <= 0 or P // rows < 2:
        return None
    C = j_ax.extent
    G = Max(Const(1), FloorDiv(Const(P), R))
    W = Min(Const(TN), CeilDiv(C, G))
    return _Fold(i_ax.name, j_ax.name, R, C, P, G, W, Min(Const(P), R))


def _size_factors(e: SizeExpr) -> list[str]:
    """The size parameters whose product ``e`` is (``R``, ``B * T``), or [] for another form."""
    if isinstance(e, Sym):
        return [e.name]
    if isinstance(e, Mul):
        a, b = _size_factors(e.a), _size_factors(e.b)
        return a + b if a and b else []
    return []


def lower(lw: Any, c: Compute, red: list, f: _Fold) -> bool:
    """Emit the folded column sums of ``c`` into ``lw.b``; False (nothing emitted) where a
    read cannot be stacked."""
    b = lw.b
    outer = b.nested()
    outer.used = b.used  # one name space with the statements around
    try:
        ind = _indicator(outer, f, c)
        u = outer.fresh("u")
        c0 = f.G * f.W * Sym(u)
        nb = outer.nested()
        accs: dict = {}
        for r in red:
            if r not in accs:
                accs[r] = _sum(lw, nb, c, r, f, ind, c0)
        _epilogue(lw, nb, c, red, accs, f, c0)
    except _NoFold:
        return False
    outer.emit(Loop(u, 0, CeilDiv(f.C, f.G * f.W), body=tuple(nb.stmts), loc=c.loc))
    b.stmts.extend(outer.stmts)
    return True


def _indicator(b: T.Builder, f: _Fold, c: Compute) -> View:
    """``ind[p, b] = 1.0`` where ``b * R <= p < (b + 1) * R``, else 0.0: ``w = (b + 1) * R - p``
    from two iotas, then ``(w > 0) - (w > R)``."""
    K = f.G * f.rows0
    loc = c.loc
    names = [b.fresh(n) for n in ("part", "blk", "ind", "above")]
    for n, cols in zip(names, (Const(1), f.G, f.G, f.G)):
        b.emit(Alloc(n, (K, cols), "float32", Buffer.SBUF, loc=loc))
    part, blk, ind, above = (T.whole(n, K, w) for n, w in zip(names, (1, f.G, f.G, f.G)))
    b.emit(Iota(part, ((0, 1),), offset=0, channel_multiplier=1, loc=loc))
    b.emit(Iota(blk, ((1, f.G),), offset=1, channel_multiplier=0, loc=loc))
    R = _row_count(b, f, K, loc)
    # w = (b + 1) * R - p: the block's end less the partition's own index
    b.emit(TensorScalar(blk, blk, Op.MUL, R, op1=Op.SUB, operand1=part, loc=loc))
    b.emit(TensorScalar(ind, blk, Op.GT, Lit(0.0, "float32"), loc=loc))
    b.emit(TensorScalar(above, blk, Op.GT, R, loc=loc))
    b.emit(TensorTensor(ind, Op.SUB, ind, above, loc=loc))
    return ind


def _row_count(b: T.Builder, f: _Fold, K: SizeExpr, loc) -> Param | View:
    """The row count as an operand: the parameter itself, or a product of parameters (merged
    rows, ``B * T``) in a ``(K, 1)`` column, one factor (two per instruction) at a time."""
    names = _size_factors(f.R)
    if len(names) == 1:
        return Param(names[0], loc=loc)
    col = b.fresh("rows")
    b.emit(Alloc(col, (K, Const(1)), "float32", Buffer.SBUF, loc=loc))
    view = T.whole(col, K, 1)
    b.emit(Memset(view, Lit(1.0, "float32"), loc=loc))
    for k in range(0, len(names), 2):
        pair = [Param(n, loc=loc) for n in names[k : k + 2]]
        op1, operand1 = (Op.MUL, pair[1]) if len(pair) == 2 else (None, None)
        b.emit(TensorScalar(view, view, Op.MUL, pair[0], op1=op1, operand1=operand1, loc=loc))
    return view


def _sum(lw: Any, nb: T.Builder, c: Compute, r: Reduce, f: _Fold, ind: View, c0) -> T.Val:
    """One reduction's ``(G, W)`` PSUM tile: the stacked first row tile through the indicator,
    then (where ``G == 1`` and there are more than ``P`` rows) the other row tiles through a
    ones vector, accumulated."""
    acc = nb.fresh("acc")
    nb.emit(Alloc(acc, (f.G, f.W), "float32", Buffer.PSUM, loc=c.loc))
    body = _stacked_body(lw, nb, c, r, f, c0)
    acc_v = T.whole(acc, f.G, f.W)
    nb.emit(Matmul(acc_v, ind, body.operand, accumulate=False, loc=c.loc))
    t = nb.fresh("t")
    kb = nb.nested()
    r0 = Const(f.P) * Sym(t)
    rows = Min(Const(f.P), f.R - r0)
    ns = Min(f.W, f.C - c0)
    more = lw._row_tile_body(kb, c, r, f.i, f.j, r0, rows, c0, ns)
    ones = kb.fresh("ones")
    kb.emit(Alloc(ones, (rows, Const(1)), more.dtype, Buffer.SBUF, loc=c.loc))
    kb.emit(Memset(T.whole(ones, rows, 1), Lit(1.0, "float32"), loc=c.loc))
    row = View(acc, (Slice(0, 1), Slice(0, ns)))
    kb.emit(Matmul(row, T.whole(ones, rows, 1), more.operand, accumulate=True, loc=c.loc))
    loop = Loop(t, 1, CeilDiv(f.R, f.P), kind=LoopKind.SEQUENTIAL, body=tuple(kb.stmts))
    nb.emit(loop.replace(loc=c.loc))
    return T.Val(T.FULL, acc_v)


def _stacked_body(lw: Any, nb: T.Builder, c: Compute, r: Reduce, f: _Fold, c0) -> T.Val:
    """The reduction's body on the stacked ``(G * rows0, W)`` tile: each read loaded block by
    block onto its partitions (a value per element, per row or per column)."""
    from cuda2nki.passes._lower_common import _RowCompiler

    K = f.G * f.rows0

    def reader(rd: Read) -> T.Val:
        got = access_class(rd.index, f.i, f.j)
        merged = None
        if got is None:  # a read through merged rows (``B * T`` rows of a [B, T, C] tensor)
            found = merged_class(rd.index, lw.decl(rd.tensor).shape, f.i, f.j)
            got, merged = (found[:2], found[2]) if found is not None else (None, None)
        if got is None or got[0] not in (FULL, ROW, BCAST):
            raise _NoFold
        cls, dims = got
        cols = Const(1) if cls == ROW else f.W
        dt = lw.decl(rd.tensor).dtype
        name = nb.fresh(f"{rd.tensor}_t")
        nb.emit(Alloc(name, (K, cols), dt, Buffer.SBUF, loc=rd.loc))
        if cls != ROW:  # the columns past the matrix in the last blocks: zeros, never stored
            nb.emit(Memset(T.whole(name, K, cols), Lit(0.0, "float32"), loc=rd.loc))
        blk = nb.fresh("b")
        cb = c0 + f.W * Sym(blk)
        n = Min(f.W, Max(Const(0), f.C - cb))
        dst = View(
            name, (Slice(f.rows0 * Sym(blk), f.rows0), Slice(0, Const(1) if cls == ROW else n))
        )
        src_dims = dims_for(dims, f.i, f.j, Const(0), f.rows0, cb, n)
        if merged is not None:
            src_dims = rows_of(src_dims, merged)
            if src_dims is None:
                raise _NoFold
        src = View(rd.tensor, src_dims)
        guard = Loop(nb.fresh("g"), 0, Min(Const(1), n), body=(Load(dst, src, loc=rd.loc),))
        nb.emit(Loop(blk, 0, f.G, body=(guard.replace(loc=rd.loc),), loc=rd.loc))
        return T.Val(T.ROW if cls == ROW else T.FULL, T.whole(name, K, cols), dt)

    comp = lw.typed(_RowCompiler(nb, K, f.W, reader, lw.params, lw.ctx.diagnostics, c.loc))
    return comp.as_full(comp.compile(r.body))


def _epilogue(lw: Any, nb: T.Builder, c: Compute, red: list, accs: dict, f: _Fold, c0) -> None:
    """What surrounds the sums, on the ``(G, W)`` tiles, and the store: ``G`` rows of ``W``
    consecutive outputs (the whole rows in one DMA, a last partial row in another)."""
    from cuda2nki.passes._lower_common import _EpilogueCompiler

    def reader(rd: Read) -> T.Val:
        if rd.index != (Sym(f.j),) or len(lw.decl(rd.tensor).shape) != 1:
            raise _NoFold
        dt = lw.decl(rd.tensor).dtype
        name = nb.fresh(f"{rd.tensor}_t")
        nb.emit(Alloc(name, (f.G, f.W), dt, Buffer.SBUF, loc=rd.loc))
        nb.emit(Memset(T.whole(name, f.G, f.W), Lit(0.0, "float32"), loc=rd.loc))
        _rows_dma(nb, rd.tensor, name, f, c0, load=True, loc=rd.loc)
        return T.Val(T.FULL, T.whole(name, f.G, f.W), dt)

    acc = accs[red[0]]
    comp = _EpilogueCompiler(nb, f.G, f.W, reader, lw.params, lw.ctx.diagnostics, c.loc)
    comp.result, comp.acc, comp.kind = red[0], acc.operand, T.FULL
    comp.others = {r: v.operand for r, v in accs.items()}
    val = comp.as_full(comp.compile(c.expr))
    res = nb.fresh(f"{c.target.tensor}_t")
    out_dt = lw.decl(c.target.tensor).dtype
    nb.emit(Alloc(res, (f.G, f.W), out_dt, Buffer.SBUF, loc=c.loc))
    nb.emit(TensorCopy(T.whole(res, f.G, f.W), val.operand, loc=c.loc))
    _rows_dma(nb, c.target.tensor, res, f, c0, load=False, loc=c.loc)


def _rows_dma(nb: T.Builder, tensor: str, tile: str, f: _Fold, c0, load: bool, loc) -> None:
    """Elements ``[c0, c0 + G * W)`` of a 1-D tensor (cut at its end) <-> the ``(G, W)``
    tile, row ``b`` holding ``[c0 + b * W, c0 + (b + 1) * W)``: the whole rows in one DMA, the
    partial row after them in another."""
    q = Min(f.G, Max(Const(0), FloorDiv(f.C - c0, f.W)))  # whole rows (a named size)
    rem = Min(f.W, Max(Const(0), f.C - c0 - q * f.W))
    pieces = (
        (Min(Const(1), q), View(tensor, (Slice(c0, q * f.W),)), (Slice(0, q), Slice(0, f.W))),
        (
            Min(Const(1), Min(Max(Const(0), f.G - q), rem)),
            View(tensor, (Slice(c0 + q * f.W, rem),)),
            (Slice(q, 1), Slice(0, rem)),
        ),
    )
    for trips, hbm, dims in pieces:
        on_chip = View(tile, dims)
        dma = Load(on_chip, hbm, loc=loc) if load else Store(hbm, on_chip, loc=loc)
        nb.emit(Loop(nb.fresh("g"), 0, trips, body=(dma,), loc=loc))
