"""Scatter-add into a 1-D target (a histogram): element chunks resident in SBUF, bins along the
free axis.

``T[$(key(n))] add= v(n) for n < N`` -- ``atomicAdd(&bins[data[i]], 1)`` and its privatised and
weighted spellings.  The row scatter-add of :mod:`cuda2nki.passes._scatter` loads a tile of 128
elements (one per partition) per contraction, so every per-element tensor moves 4 B per
partition row per DMA, again for every block of target rows.  With a 1-D target the elements
need no order, so they are taken in chunks of ``[rows, F]`` (element ``base + p * F + f``: one
DMA of ``F`` contiguous elements per partition row, loaded once per chunk) and every column of
the chunk is one element tile of the contraction; the counts go along the free axis::

    psum[0, b] += v[:, f]^T @ onehot_f[:, b]     (nc_matmul: K = the chunk's rows, M = 1,
                                                  N = a block of up to 512 bins)

summed over the chunk's columns in PSUM and added into a ``[1, bins]`` total that starts from
the target's prior contents (zero for an ``out`` target) and is stored by one DMA.

Exactness: PSUM sums one chunk, at most ``128 * F`` elements; an integer target limits ``F``
to the element tiles fp32 sums exactly (see ``_tiles_per_group``) and adds each chunk's counts
into an int32 total (all-int32 ``tensor_tensor`` runs on GpSimd, exactly).

Taken only when every read is an element read ``X[n]`` of a 1-D tensor and no index value uses
the element axis (its partition stride ``F`` is not a constant); otherwise the row lowering
applies.  The chunking and the per-column one-hot are shared with the row scatter-add of
:mod:`cuda2nki.passes._scatter_rows`.
"""

from __future__ import annotations

from collections.abc import Iterator

from cuda2nki.ir.nodes import (
    Alloc,
    Binary,
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
    SizeExpr,
    Slice,
    Store,
    Sym,
    TensorCopy,
    TensorTensor,
    View,
)
from cuda2nki.ir.ops import Buffer, LoopKind, Op, Role
from cuda2nki.passes import _tiles as T
from cuda2nki.passes._index import plus

#: bins per contraction (one 2 KiB PSUM bank of fp32 on one partition)
BINS_PER_BLOCK = 512
#: bins one ``[1, bins]`` total holds (32 KiB of one partition); more bins take several passes
BINS_PER_PASS = 8192
#: element columns per chunk (8 KiB per partition per resident tensor)
COLS_PER_CHUNK = 2048
PARTITIONS = 128


def chunk_parts(N: SizeExpr, F: SizeExpr) -> tuple:
    """The chunks of ``N`` elements, ``F`` per partition row: ``(trips, base of trip v, rows
    (None: the tail's, see :func:`tail_rows`), columns)`` -- full ``[128, F]`` chunks, one of
    fewer rows, and the last ``N % F`` elements down the partitions, 128 at a time."""
    chunk = T.Const(PARTITIONS) * F
    full, rem = N // chunk, N % chunk
    return (
        (full, lambda v: chunk * T.Sym(v), Const(PARTITIONS), F),
        (Min(1, rem // F), lambda v: full * chunk, rem // F, F),
        (
            CeilDiv(N % F, PARTITIONS),
            lambda v: plus(N - N % F, T.Const(PARTITIONS) * T.Sym(v)),
            None,
            Const(1),
        ),
    )


def tail_rows(N: SizeExpr, F: SizeExpr, v: str) -> SizeExpr:
    return Min(PARTITIONS, N % F - T.Const(PARTITIONS) * T.Sym(v))


def load_resident(lw, b, c: Compute, reads, base, rows, cols) -> dict:
    """The chunk of each 1-D tensor in ``reads``: ``[rows, cols]``, one DMA each."""
    resident = {}
    for name in reads:
        tile = b.fresh(f"{name}_t")
        dt = lw.decl(name).dtype
        b.emit(Alloc(tile, (rows, cols), dt, Buffer.SBUF, loc=c.loc))
        src = View(name, (Slice(base, rows * cols),))
        b.emit(Load(T.whole(tile, rows, cols), src, loc=c.loc))
        resident[name] = (tile, dt)
    return resident


def lower_counts(lw, c: Compute, n_ax: str, N: SizeExpr, tiles_per_group: int) -> None:
    """Emit the chunked contraction of ``c`` (guard already bounded: ``N`` elements) into
    ``lw.b``; raises ``T.Unsupported`` (emitting nothing) where the reads do not allow it."""
    reads = _element_reads(c, n_ax, lw.kernel.tensors)
    decl = lw.decl(c.target.tensor)
    integer = not T.is_float(decl.dtype)
    limit = min(COLS_PER_CHUNK, tiles_per_group) if integer else COLS_PER_CHUNK
    F: SizeExpr = Min(limit, Max(1, CeilDiv(N, PARTITIONS)))
    B = decl.shape[0]
    b = lw.b.nested()
    q = b.fresh("q")
    q0 = T.Const(BINS_PER_PASS) * T.Sym(q)
    nq = Min(BINS_PER_PASS, B - q0)
    pb = b.nested()
    total = pb.fresh("total")
    tot = T.whole(total, Const(1), nq)
    pb.emit(Alloc(total, (Const(1), nq), decl.dtype, Buffer.SBUF, loc=c.loc))
    if decl.role == Role.INOUT:
        pb.emit(Load(tot, View(c.target.tensor, (Slice(q0, nq),)), loc=c.loc))
    else:
        pb.emit(Memset(tot, Lit(0, decl.dtype), loc=c.loc))
    for stop, base_of, rows, cols in chunk_parts(N, F):
        v = pb.fresh("k")
        kb = pb.nested()
        base = base_of(v)
        rows = tail_rows(N, F, v) if rows is None else rows
        resident = load_resident(lw, kb, c, reads, base, rows, cols)
        _blocks(lw, kb, c, (n_ax, resident, rows, cols), (q0, nq), tot, integer)
        pb.emit(Loop(v, 0, stop, body=tuple(kb.stmts), loc=c.loc))
    pb.emit(Store(View(c.target.tensor, (Slice(q0, nq),)), tot, loc=c.loc))
    b.emit(Loop(q, 0, CeilDiv(B, BINS_PER_PASS), body=tuple(pb.stmts), loc=c.loc))
    lw.b.stmts.extend(b.stmts)


def _blocks(lw, b, c: Compute, chunk: tuple, bins: tuple, tot: View, integer: bool) -> None:
    """Per block of up to 512 bins of this pass: the chunk's columns contracted into one PSUM
    row, then added into the total."""
    q0, nq = bins
    pre = per_chunk(lw, b, c, chunk)
    w = b.fresh("w")
    w0 = T.Const(BINS_PER_BLOCK) * T.Sym(w)
    nb = Min(BINS_PER_BLOCK, nq - w0)
    wb = b.nested()
    acc = wb.fresh("acc")
    wb.emit(Alloc(acc, (Const(1), nb), "float32", Buffer.PSUM, loc=c.loc))
    acc_v = T.whole(acc, Const(1), nb)
    cols = chunk[3]
    bin_ax = wb.fresh("bin")
    shared = _shared(lw, wb, c, chunk, (bin_ax, plus(q0, w0), nb), pre)
    for first in (True, False):
        fb = wb.nested()
        f = Const(0) if first else T.Sym(fb.fresh("f"))
        cache = {**shared, **{k: column(v, chunk[2], f) for k, v in pre.items()}}
        onehot = onehot_of(lw, fb, c, chunk, f, (bin_ax, plus(q0, w0), nb), cache)
        fb.emit(Matmul(acc_v, cache[VALUE].operand, onehot, accumulate=not first, loc=c.loc))
        if first:
            wb.stmts.extend(fb.stmts)
            continue
        loop = Loop(f.name, 1, cols, kind=LoopKind.SEQUENTIAL, body=tuple(fb.stmts), loc=c.loc)
        wb.emit(loop)
    part = View(tot.tensor, (Slice(0, Const(1)), Slice(w0, nb)))
    if integer:
        counts = wb.fresh("part")
        wb.emit(Alloc(counts, (Const(1), nb), b.dtypes[tot.tensor], Buffer.SBUF, loc=c.loc))
        wb.emit(TensorCopy(T.whole(counts, Const(1), nb), acc_v, loc=c.loc))
        acc_v = T.whole(counts, Const(1), nb)
    wb.emit(TensorTensor(part, Op.ADD, part, acc_v, loc=c.loc))
    b.emit(Loop(w, 0, CeilDiv(nq, BINS_PER_BLOCK), body=tuple(wb.stmts), loc=c.loc))


#: the cache entry of the contraction's values (the matmul's stationary operand)
VALUE = ("value",)


def _key(e) -> tuple:
    """The compiler's cache key of ``e`` (see ``TileExprCompiler.compile``)."""
    from cuda2nki.passes._analysis import alpha_key

    return ("read", e.tensor, e.index) if isinstance(e, Read) else alpha_key(e)


def per_chunk(lw, b, c: Compute, chunk: tuple, values: bool = True) -> dict:
    """The element-wise parts of the contraction over the whole ``[rows, F]`` chunk, once: the
    key, the guard and (where it reads elements) the value as float32.  Keyed like the
    compiler's cache; each column of them is one element tile's."""
    from cuda2nki.passes._lower_common import _cap, _RowCompiler
    from cuda2nki.passes._scatter import _float

    n_ax, resident, rows, cols = chunk

    def reader(rd: Read) -> T.Val:
        tile, dt = resident[rd.tensor]
        return T.Val(T.FULL, T.whole(tile, rows, cols), dt)

    comp = lw.typed(_RowCompiler(b, rows, cols, reader, lw.params, lw.ctx.diagnostics, c.loc))
    comp.p_axis, comp.f_axis = n_ax, ""
    comp.full = (PARTITIONS, _cap(cols))
    out = {}
    key = c.target.index[0].expr
    out[_key(key)] = comp.compile(key)
    if c.domain.guard is not None:
        out[_key(c.domain.guard)] = comp.compile(c.domain.guard)
    if values and any(isinstance(x, Read) for x in walk_expr(c.expr)):
        val = comp.as_full(comp.compile(c.expr))
        out[VALUE] = T.Val(T.FULL, _float(b, val, rows, cols, "vals", c), "float32")
    return out


def column(v: T.Val, rows: SizeExpr, f: SizeExpr) -> T.Val:
    """Column ``f`` of a chunk-wide value (a value the same for every element stays)."""
    if v.kind != T.FULL:
        return v
    tile = View(v.operand.tensor, (Slice(0, rows), Slice(f, Const(1))))
    return T.Val(T.ROW, tile, v.dtype, v.lo, v.hi)


def _shared(lw, b, c: Compute, chunk: tuple, bins: tuple, pre: dict) -> dict:
    """What every column of a block shares, compiled once ahead of the column loop: the bin
    numbers of the block (an iota plus its offset) and a value that reads no element (``+1``).
    Returned as a compiler cache."""
    from cuda2nki.passes._scatter import _float

    n_ax, resident, rows, _ = chunk
    comp = compiler(lw, b, c, (n_ax, resident, rows), Const(0), bins)
    comp.compile(IndexValue(Sym(bins[0])))
    if VALUE not in pre:
        value = compiler(lw, b, c, (n_ax, resident, rows), Const(0), ("", Const(0), Const(1)))
        got = value.as_full(value.compile(c.expr))
        comp.cache[VALUE] = T.Val(T.ROW, _float(b, got, rows, Const(1), "vals", c), "float32")
    return comp.cache


def onehot_of(lw, b, c: Compute, chunk: tuple, f: SizeExpr, bins: tuple, cache: dict) -> View:
    """Column ``f`` of the chunk as an element tile: the ``[rows, nb]`` one-hot of its keys over
    the block's bins (``cache``: the chunk's columns and what the block's columns share)."""
    from cuda2nki.passes._scatter import _float

    n_ax, resident, rows, _ = chunk
    bin_ax, b0, nb = bins
    hit = Binary(Op.EQ, IndexValue(Sym(bin_ax)), c.target.index[0].expr, loc=c.loc)
    if c.domain.guard is not None:
        hit = Binary(Op.LAND, c.domain.guard, hit, loc=c.loc)
    comp = compiler(lw, b, c, (n_ax, resident, rows), f, bins)
    comp.cache = cache
    # a comparison (and a conjunction of them) is 1.0 or 0.0 already: the one-hot itself
    return _float(b, comp.as_full(comp.compile(hit)), rows, nb, "onehot", c)


def compiler(lw, b, c: Compute, elems: tuple, f: SizeExpr, bins: tuple):
    from cuda2nki.passes._lower_common import _cap, _RowCompiler

    n_ax, resident, rows = elems
    bin_ax, b0, nb = bins

    def reader(rd: Read) -> T.Val:
        tile, dt = resident[rd.tensor]
        return T.Val(T.ROW, View(tile, (Slice(0, rows), Slice(f, Const(1)))), dt)

    comp = lw.typed(_RowCompiler(b, rows, nb, reader, lw.params, lw.ctx.diagnostics, c.loc))
    comp.p_axis, comp.f_axis = n_ax, bin_ax
    comp.index_map = {bin_ax: (0, 1, b0)} if bin_ax else {}
    comp.full = (PARTITIONS, _cap(nb))
    comp.loop_syms = frozenset(b0.free_syms() | f.free_syms())
    return comp


def _element_reads(c: Compute, n_ax: str, tensors: dict) -> tuple[str, ...]:
    """The 1-D tensors ``c`` reads at ``[n]``; ``T.Unsupported`` for any other read, or for an
    index value of the element axis."""
    exprs = [c.target.index[0].expr, c.expr] + ([c.domain.guard] if c.domain.guard else [])
    names: list[str] = []
    for e in exprs:
        for node in walk_expr(e):
            if isinstance(node, Read):
                decl = tensors.get(node.tensor)
                if node.index != (Sym(n_ax),) or decl is None or len(decl.shape) != 1:
                    raise T.Unsupported(f"the read of '{node.tensor}' in a chunked scatter", c.loc)
                if node.tensor not in names:
                    names.append(node.tensor)
            elif isinstance(node, IndexValue) and n_ax in node.expr.free_syms():
                raise T.Unsupported("the element index in a chunked scatter", c.loc)
    return tuple(names)


def walk_expr(e) -> Iterator:
    yield e
    for child in getattr(e, "__dataclass_fields__", {}):
        val = getattr(e, child)
        for x in val if isinstance(val, tuple) else (val,):
            if hasattr(x, "__dataclass_fields__") and not isinstance(x, SizeExpr | View):
                yield from walk_expr(x)
