"""Row scatter-add into a float table (embedding backward): resident key chunks, every column
block of a row block from the same one-hot.

``T[$(key(n)), c] add= v(n, c)`` -- ``atomicAdd(&dwte[ids[t] * C + c], dout[t * C + c])``.
The row lowering of :mod:`cuda2nki.passes._scatter` accumulates one 512-column PSUM bank over
all element tiles, so every element tile's keys are loaded and its one-hot built again for
every bank.  Here, per block of 128 target rows and group of up to 2048 columns (an SBUF total
that starts from the target's prior contents): the elements are taken in resident ``[rows, F]``
chunks of their 1-D tensors (element ``base + p * F + f``, one DMA per chunk, key and guard
computed over the whole chunk once -- see :mod:`cuda2nki.passes._scatter_counts`); per bank,
each column of the chunk is an element tile whose one-hot (two instructions) is contracted
with its values in PSUM, the values' rows taken with the chunk's stride (``Rows`` of the flat
tensor); the bank's sum is added into the total, which is stored by one DMA.

Taken for float targets whose reads are the element's ``X[n]`` (1-D) or its row ``X[n, c]``
(the key and guard read only the former); otherwise the row lowering applies.
"""

from __future__ import annotations

from cuda2nki.ir.nodes import (
    Alloc,
    CeilDiv,
    Compute,
    Const,
    IndexValue,
    Lit,
    Load,
    Loop,
    Matmul,
    Max,
    Memset,
    Min,
    Read,
    Rows,
    SizeExpr,
    Slice,
    Store,
    Sym,
    TensorCopy,
    TensorTensor,
    View,
)
from cuda2nki.ir.ops import Buffer, LoopKind, Op, Role
from cuda2nki.passes import _scatter_counts as S
from cuda2nki.passes import _tiles as T
from cuda2nki.passes._index import plus

#: target rows per block (PSUM partitions), columns per bank, columns per SBUF total
ROWS_PER_BLOCK, COLS_PER_BANK, COLS_PER_GROUP = 128, 512, 2048


def lower_rows(lw, c: Compute, n_ax: str, c_ax: str, N: SizeExpr) -> None:
    """Emit the chunked row scatter-add of ``c`` into ``lw.b``; ``T.Unsupported`` (emitting
    nothing) where its reads or target do not allow it."""
    decl = lw.decl(c.target.tensor)
    if not T.is_float(decl.dtype) or len(decl.shape) != 2:
        raise T.Unsupported("a row scatter into an integer table", c.loc)
    ones, rows2 = _reads(c, n_ax, c_ax, lw.kernel.tensors)
    B, C = decl.shape
    F: SizeExpr = Min(S.COLS_PER_CHUNK, Max(1, CeilDiv(N, S.PARTITIONS)))
    b = lw.b.nested()
    u, g = b.fresh("u"), b.fresh("cg")
    b0 = T.Const(ROWS_PER_BLOCK) * T.Sym(u)
    mb = Min(ROWS_PER_BLOCK, B - b0)
    c0 = T.Const(COLS_PER_GROUP) * T.Sym(g)
    ncg = Min(COLS_PER_GROUP, C - c0)
    gb = b.nested()
    total = gb.fresh("total")
    tot = T.whole(total, mb, ncg)
    gb.emit(Alloc(total, (mb, ncg), "float32", Buffer.SBUF, loc=c.loc))
    block = View(c.target.tensor, (Slice(b0, mb), Slice(c0, ncg)))
    if decl.role == Role.INOUT and decl.dtype == "float32":
        gb.emit(Load(tot, block, loc=c.loc))
    elif decl.role == Role.INOUT:
        prior = gb.fresh(f"{c.target.tensor}_t")
        gb.emit(Alloc(prior, (mb, ncg), decl.dtype, Buffer.SBUF, loc=c.loc))
        gb.emit(Load(T.whole(prior, mb, ncg), block, loc=c.loc))
        gb.emit(TensorCopy(tot, T.whole(prior, mb, ncg), loc=c.loc))
    else:
        gb.emit(Memset(tot, Lit(0.0, "float32"), loc=c.loc))
    for stop, base_of, rows, cols in S.chunk_parts(N, F):
        v = gb.fresh("k")
        kb = gb.nested()
        base = base_of(v)
        rows = S.tail_rows(N, F, v) if rows is None else rows
        resident = S.load_resident(lw, kb, c, ones, base, rows, cols)
        chunk = (n_ax, resident, rows, cols)
        _banks(lw, kb, c, chunk, (c_ax, base, cols, rows2), (b0, mb, c0, ncg), tot)
        gb.emit(Loop(v, 0, stop, body=tuple(kb.stmts), loc=c.loc))
    out = tot
    if decl.dtype != "float32":
        res = gb.fresh(f"{c.target.tensor}_out")
        gb.emit(Alloc(res, (mb, ncg), decl.dtype, Buffer.SBUF, loc=c.loc))
        gb.emit(TensorCopy(T.whole(res, mb, ncg), tot, loc=c.loc))
        out = T.whole(res, mb, ncg)
    gb.emit(Store(block, out, loc=c.loc))
    inner = Loop(g, 0, CeilDiv(C, COLS_PER_GROUP), body=tuple(gb.stmts), loc=c.loc)
    b.emit(Loop(u, 0, CeilDiv(B, ROWS_PER_BLOCK), body=(inner,), loc=c.loc))
    lw.b.stmts.extend(b.stmts)


def _banks(lw, b, c: Compute, chunk: tuple, cols: tuple, block: tuple, tot: View) -> None:
    """Per bank of up to 512 columns of the group: the chunk's columns contracted into PSUM,
    then added into the total."""
    b0, mb, c0, ncg = block
    pre = S.per_chunk(lw, b, c, chunk, values=False)
    w = b.fresh("w")
    w0 = T.Const(COLS_PER_BANK) * T.Sym(w)
    nb = Min(COLS_PER_BANK, ncg - w0)
    wb = b.nested()
    acc = wb.fresh("acc")
    wb.emit(Alloc(acc, (mb, nb), "float32", Buffer.PSUM, loc=c.loc))
    acc_v = T.whole(acc, mb, nb)
    bin_ax = wb.fresh("bin")
    n_ax, resident, rows, ncols = chunk
    shared = S.compiler(lw, wb, c, (n_ax, resident, rows), Const(0), (bin_ax, b0, mb))
    shared.compile(IndexValue(Sym(bin_ax)))
    for first in (True, False):
        fb = wb.nested()
        f = Const(0) if first else T.Sym(fb.fresh("f"))
        cache = {**shared.cache, **{k: S.column(x, rows, f) for k, x in pre.items()}}
        onehot = S.onehot_of(lw, fb, c, chunk, f, (bin_ax, b0, mb), cache)
        vals = _values(lw, fb, c, chunk, f, cols, plus(c0, w0), nb)
        fb.emit(Matmul(acc_v, onehot, vals, accumulate=not first, loc=c.loc))
        if first:
            wb.stmts.extend(fb.stmts)
            continue
        loop = Loop(f.name, 1, ncols, kind=LoopKind.SEQUENTIAL, body=tuple(fb.stmts), loc=c.loc)
        wb.emit(loop)
    part = View(tot.tensor, (Slice(0, mb), Slice(w0, nb)))
    wb.emit(TensorTensor(part, Op.ADD, part, acc_v, loc=c.loc))
    b.emit(Loop(w, 0, CeilDiv(ncg, COLS_PER_BANK), body=tuple(wb.stmts), loc=c.loc))


def _values(lw, b, c: Compute, chunk: tuple, f, cols: tuple, cb0, nb) -> View:
    """``[rows, nb]`` float32 values of column ``f`` of the chunk: an element's own values from
    its resident column, a row read ``X[n, c]`` by one DMA of the chunk's strided rows."""
    from cuda2nki.passes._lower_common import _cap, _RowCompiler
    from cuda2nki.passes._scatter import _float

    n_ax, resident, rows, _ = chunk
    c_ax, base, step, _ = cols  # element base + p * step + f

    def reader(rd: Read) -> T.Val:
        if rd.tensor in resident and rd.index == (Sym(n_ax),):
            tile, dt = resident[rd.tensor]
            return T.Val(T.ROW, View(tile, (Slice(0, rows), Slice(f, Const(1)))), dt)
        width = lw.decl(rd.tensor).shape[1]
        start = plus(plus(base, f) * width, cb0)
        src = View(rd.tensor, (Rows(start, rows, step * width, nb),))
        return lw._load(b, rd, (rows, nb), (src.dims[0],), T.FULL, lw.decl(rd.tensor).dtype)

    comp = lw.typed(_RowCompiler(b, rows, nb, reader, lw.params, lw.ctx.diagnostics, c.loc))
    comp.p_axis, comp.f_axis = n_ax, c_ax
    comp.index_map = {c_ax: (0, 1, cb0)}
    comp.full = (S.PARTITIONS, _cap(nb))
    comp.loop_syms = frozenset(cb0.free_syms() | f.free_syms() | base.free_syms())
    val = comp.as_full(comp.compile(c.expr))
    return _float(b, val, rows, nb, "vals", c)


def _reads(c: Compute, n_ax: str, c_ax: str, tensors: dict) -> tuple[tuple, tuple]:
    """(1-D tensors read at ``[n]``, 2-D tensors read at ``[n, c]``); ``T.Unsupported`` for any
    other read, a row read in the key or guard, or an index value of the element axis."""
    ones: list[str] = []
    twos: list[str] = []
    keyed = [c.target.index[0].expr] + ([c.domain.guard] if c.domain.guard else [])
    for e, row_ok in [(x, False) for x in keyed] + [(c.expr, True)]:
        for node in S.walk_expr(e):
            if isinstance(node, IndexValue) and n_ax in node.expr.free_syms():
                raise T.Unsupported("the element index in a chunked scatter", c.loc)
            if not isinstance(node, Read):
                continue
            decl = tensors.get(node.tensor)
            rank = len(decl.shape) if decl is not None else 0
            if rank == 1 and node.index == (Sym(n_ax),):
                ones += [node.tensor] if node.tensor not in ones else []
            elif row_ok and rank == 2 and node.index == (Sym(n_ax), Sym(c_ax)):
                twos += [node.tensor] if node.tensor not in twos else []
            else:
                raise T.Unsupported(f"the read of '{node.tensor}' in a chunked scatter", c.loc)
    return tuple(ones), tuple(twos)
