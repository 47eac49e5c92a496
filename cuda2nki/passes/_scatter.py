"""Lowering of a scatter-add (``layout = scatter``): ``T[$(key(n)), c] add= v(n, c) for n < N``.

Histograms (``atomicAdd(&bins[data[i]], 1)``) and row scatter-adds (embedding backward:
``atomicAdd(&dwte[ids[t] * C + c], dout[t * C + c])``) lift to one Compute whose target's first
index is read from data, combining duplicate keys with ``accumulate=add``.

On Trainium the duplicates are combined by the tensor engine, not by atomics: per tile of 128
elements (partition = element) a one-hot matrix ``onehot[n, b] = (b == key(n)) && guard(n)`` over
a block of up to 128 target rows (free = row id, an iota compared with the per-partition key) is
contracted over the partitions with the values ``v[n, c]`` (up to 512 columns)::

    psum[b, c] += onehot[n, b]^T @ v[n, c]      (nc_matmul, fp32 accumulation in PSUM)

accumulated across the element tiles, then added to the target's prior contents and stored.  A key
outside ``[0, rows)`` matches no column of the one-hot, and a guard (the kernel's range check, a
padding id's early return) zeroes its element's row, so skipped elements add nothing.

Exactness and limits:

* the PSUM accumulation is fp32, exact for integers below 2**24 (16,777,216).  An integer target is
  therefore summed in groups of element tiles that cannot reach 2**24 (a literal count ``v`` per
  element: ``(2**24 - 1) // (128 * |v|)`` tiles, 131071 for ``+1``; any other value one tile per
  group, exact while a tile's partial sums stay below 2**24, e.g. ``|v| < 2**17``), each group
  copied to int32 and added into an int32 accumulator holding the prior contents (an all-int32
  ``tensor_tensor`` runs on GpSimd, exactly): histogram counts are exact up to the int32 range,
  as with CUDA's atomics.  Float targets are summed in another order than the CUDA atomics'
  (which is unspecified anyway);
* a NaN or infinite value of one element spreads to its whole column in the contraction (0 * NaN
  is NaN), where CUDA would only poison its own key's row;
* the one-hot costs one vector-engine pass over ``128 x rows`` per element tile and target-row
  block: cheap for histograms and vocabularies of a few thousand rows, linear in the number of
  target rows beyond that.
"""

from __future__ import annotations

from cuda2nki.ir.nodes import (
    Alloc,
    Binary,
    CeilDiv,
    Compute,
    Const,
    Dyn,
    IndexValue,
    Lit,
    Loop,
    Matmul,
    Memset,
    Min,
    Read,
    Select,
    Slice,
    Store,
    Sym,
    TensorCopy,
    TensorTensor,
    View,
)
from cuda2nki.ir.ops import Buffer, LoopKind, Op, Role
from cuda2nki.passes import _tiles as T
from cuda2nki.passes._index import ROW, access_class, dims_for, plus

#: the tensor engine's contraction tile: rows of the target per matmul (PSUM partitions) and
#: columns per matmul (one PSUM bank of fp32)
ROWS_PER_BLOCK, COLS_PER_BLOCK, ELEMS_PER_TILE = 128, 512, 128
#: fp32 represents every integer below this exactly
EXACT = 2**24


def scatter_shape(c: Compute, tensors: dict) -> tuple[str, str] | None:
    """``(element axis, column axis or "")`` of a scatter-add the one-hot lowering takes: the
    target's first index is read from data and its others are distinct domain axes; exactly one
    domain axis (the element axis) is left over."""
    if c.accumulate is not Op.ADD or not c.target.index:
        return None
    key, *rest = c.target.index
    decl = tensors.get(c.target.tensor)
    if not isinstance(key, Dyn) or decl is None or len(rest) > 1:
        return None
    names = [a.name for a in c.domain.axes]
    cols = [ix.name for ix in rest if isinstance(ix, Sym) and ix.name in names]
    if len(cols) != len(rest):
        return None
    elems = [n for n in names if n not in cols]
    if len(elems) != 1:
        return None
    if cols and decl.shape[1] != next(a.extent for a in c.domain.axes if a.name == cols[0]):
        return None
    return elems[0], (cols[0] if cols else "")


def lower_scatter(lw, c: Compute) -> None:
    """Emit the one-hot contraction for ``c`` into ``lw.b`` (``lw``: the lower-tiles state)."""
    shape = scatter_shape(c, lw.kernel.tensors)
    if shape is None:
        raise T.Unsupported(f"a scatter into '{c.target.tensor}' of this shape", c.loc)
    n_ax, c_ax = shape
    decl = lw.decl(c.target.tensor)
    extents = {a.name: a.extent for a in c.domain.axes}
    guard = None if c.domain.guard is None else _push_not(c.domain.guard, lw.kernel)
    N, guard = _bound(extents[n_ax], n_ax, guard)
    c = c.replace(domain=c.domain.replace(guard=guard))
    if not c_ax:  # a histogram: resident element chunks, counts along the free axis
        from cuda2nki.passes._scatter_counts import lower_counts

        try:
            return lower_counts(lw, c, n_ax, N, _tiles_per_group(c))
        except T.Unsupported:
            pass  # reads the chunks cannot serve: one element tile at a time
    else:  # rows into a float table: every bank of a row block from one one-hot per tile
        from cuda2nki.passes._scatter_rows import lower_rows

        try:
            return lower_rows(lw, c, n_ax, c_ax, N)
        except T.Unsupported:
            pass
    B = decl.shape[0]
    C = extents[c_ax] if c_ax else Const(1)
    b = lw.b
    u, w = b.fresh("u"), b.fresh("w") if c_ax else ""
    b0, mb = (
        T.Const(ROWS_PER_BLOCK) * T.Sym(u),
        Min(ROWS_PER_BLOCK, B - T.Const(ROWS_PER_BLOCK) * T.Sym(u)),
    )
    c0, nc = Const(0), Const(1)
    if c_ax:
        c0 = T.Const(COLS_PER_BLOCK) * T.Sym(w)
        nc = Min(COLS_PER_BLOCK, C - c0)
    blk = b.nested()
    acc = blk.fresh("acc")
    blk.emit(Alloc(acc, (mb, nc), "float32", Buffer.PSUM, loc=c.loc))
    acc_v = T.whole(acc, mb, nc)
    shape = (n_ax, c_ax, b0, mb, c0, nc)
    if T.is_float(decl.dtype):
        _contract(lw, blk, c, acc_v, shape, Const(0), N, None)
        _epilogue(lw, blk, c, acc_v, c_ax, b0, mb, c0, nc)
    else:
        _exact_counts(lw, blk, c, acc_v, shape, N)
    inner = tuple(blk.stmts)
    if c_ax:
        inner = (Loop(w, 0, CeilDiv(C, COLS_PER_BLOCK), body=inner, loc=c.loc),)
    b.emit(Loop(u, 0, CeilDiv(B, ROWS_PER_BLOCK), body=inner, loc=c.loc))


def _contract(lw, b, c: Compute, acc: View, shape: tuple, g0, N, tiles) -> None:
    """``acc = sum`` over the element tiles from ``g0`` (``tiles`` of them at most, or all up to
    ``N``) of ``onehot^T @ values``: the first tile starts the PSUM accumulation."""
    n_ax, c_ax, b0, mb, c0, nc = shape
    for first in (True, False):
        kb = b.nested()
        t = None if first else b.fresh("t")
        r0 = g0 if first else plus(g0, T.Const(ELEMS_PER_TILE) * T.Sym(t))
        rows = Min(ELEMS_PER_TILE, N - r0)
        onehot = _onehot(lw, kb, c, n_ax, r0, rows, b0, mb)
        vals = _values(lw, kb, c, n_ax, c_ax, r0, rows, c0, nc)
        kb.emit(Matmul(acc, onehot, vals, accumulate=not first, loc=c.loc))
        if first:
            b.stmts.extend(kb.stmts)
            continue
        trips = CeilDiv(N - g0, ELEMS_PER_TILE)
        trips = trips if tiles is None else Min(tiles, trips)
        body = tuple(kb.stmts)
        b.emit(Loop(t, 1, trips, kind=LoopKind.SEQUENTIAL, body=body, loc=c.loc))


def _exact_counts(lw, b, c: Compute, acc: View, shape: tuple, N) -> None:
    """An integer target: PSUM sums groups of element tiles small enough to stay below 2**24
    (exact in fp32), each group added into an int32 accumulator (all-int32 ``tensor_tensor``
    runs on GpSimd, exactly) that starts from the target's prior contents."""
    n_ax, c_ax, b0, mb, c0, nc = shape
    decl = lw.decl(c.target.tensor)
    dims = (Slice(b0, mb), Slice(c0, nc)) if c_ax else (Slice(b0, mb),)
    total = b.fresh("total")
    b.emit(Alloc(total, (mb, nc), decl.dtype, Buffer.SBUF, loc=c.loc))
    tot = T.whole(total, mb, nc)
    if decl.role == Role.INOUT:
        from cuda2nki.ir.nodes import Load

        b.emit(Load(tot, View(c.target.tensor, dims), loc=c.loc))
    else:
        b.emit(Memset(tot, Lit(0, decl.dtype), loc=c.loc))
    tiles = _tiles_per_group(c)
    g = b.fresh("g")
    gb = b.nested()
    g0 = T.Const(ELEMS_PER_TILE * tiles) * T.Sym(g)
    _contract(lw, gb, c, acc, shape, g0, N, tiles)
    part = gb.fresh("part")
    gb.emit(Alloc(part, (mb, nc), decl.dtype, Buffer.SBUF, loc=c.loc))
    gb.emit(TensorCopy(T.whole(part, mb, nc), acc, loc=c.loc))
    gb.emit(TensorTensor(tot, Op.ADD, tot, T.whole(part, mb, nc), loc=c.loc))
    trips = CeilDiv(N, ELEMS_PER_TILE * tiles)
    b.emit(Loop(g, 0, trips, kind=LoopKind.SEQUENTIAL, body=tuple(gb.stmts), loc=c.loc))
    b.emit(Store(View(c.target.tensor, dims), tot, loc=c.loc))


def _tiles_per_group(c: Compute) -> int:
    """Element tiles one PSUM group may sum exactly: a literal count ``v`` per element adds at
    most ``128 * |v|`` per tile to a target element; any other value one tile at a time (exact
    while a tile's partial sums stay below 2**24, e.g. ``|v| < 2**17``)."""
    from cuda2nki.ir.nodes import Cast

    v = c.expr.x if isinstance(c.expr, Cast) else c.expr
    if isinstance(v, Lit) and v.value != 0 and float(v.value).is_integer():
        return max(1, (EXACT - 1) // (ELEMS_PER_TILE * abs(int(v.value))))
    return 1


def _compiler(lw, b, c: Compute, p_axis: str, f_axis: str, r0, rows, f0, cols):
    from cuda2nki.passes._lower_common import _cap, _RowCompiler

    def reader(rd: Read) -> T.Val:
        if any(isinstance(ix, Dyn) for ix in rd.index):
            raise T.Unsupported(f"a gather from '{rd.tensor}' inside a scatter", rd.loc)
        got = access_class(rd.index, p_axis, f_axis)
        if got is None:
            raise T.Unsupported(f"the access pattern of '{rd.tensor}'", rd.loc)
        cls, dims = got
        view = dims_for(dims, p_axis, f_axis, r0, rows, f0, cols)
        dt = lw.decl(rd.tensor).dtype
        if cls == ROW:
            return lw._load(b, rd, (rows, Const(1)), view, T.ROW, dt)
        return lw._load(b, rd, (rows, cols), view, T.FULL, dt)

    comp = lw.typed(_RowCompiler(b, rows, cols, reader, lw.params, lw.ctx.diagnostics, c.loc))
    comp.p_axis, comp.f_axis = p_axis, f_axis
    comp.index_map = {p_axis: (1, 0, r0)}
    if f_axis:
        comp.index_map[f_axis] = (0, 1, f0)
    comp.full = (ELEMS_PER_TILE, _cap(cols))
    comp.loop_syms = frozenset(r0.free_syms() | f0.free_syms())
    return comp


def _onehot(lw, b, c: Compute, n_ax: str, r0, rows, b0, mb) -> View:
    """``[rows, mb]`` float32: 1 where the element's key is the block's row ``b0 + f``."""
    bin_ax = b.fresh("bin")
    key = c.target.index[0].expr
    hit = Binary(Op.EQ, IndexValue(Sym(bin_ax)), key, loc=c.loc)
    if c.domain.guard is not None:
        hit = Binary(Op.LAND, c.domain.guard, hit, loc=c.loc)
    expr = Select(hit, Lit(1.0, "float32"), Lit(0.0, "float32"), loc=c.loc)
    comp = _compiler(lw, b, c, n_ax, bin_ax, r0, rows, b0, mb)
    val = comp.as_full(comp.compile(expr))
    return _float(b, val, rows, mb, "onehot", c)


def _values(lw, b, c: Compute, n_ax: str, c_ax: str, r0, rows, c0, nc) -> View:
    comp = _compiler(lw, b, c, n_ax, c_ax, r0, rows, c0, nc)
    val = comp.as_full(comp.compile(c.expr))
    return _float(b, val, rows, nc, "vals", c)


def _float(b, val: T.Val, rows, cols, base: str, c: Compute) -> View:
    """The tile as a float32 matmul operand (integer counts are exact in fp32 below 2**24)."""
    if val.dtype == "float32":
        return val.operand
    name = b.fresh(base)
    b.emit(Alloc(name, (rows, cols), "float32", Buffer.SBUF, loc=c.loc))
    b.emit(TensorCopy(T.whole(name, rows, cols), val.operand, loc=c.loc))
    return T.whole(name, rows, cols)


def _epilogue(lw, b, c: Compute, acc: View, c_ax: str, b0, mb, c0, nc) -> None:
    """``T[block] = prior + acc`` (an ``out`` target starts from zero), in the target dtype."""
    decl = lw.decl(c.target.tensor)
    dims = (Slice(b0, mb), Slice(c0, nc)) if c_ax else (Slice(b0, mb),)
    total = acc
    if decl.role == Role.INOUT:
        prior = b.fresh(f"{c.target.tensor}_t")
        b.emit(Alloc(prior, (mb, nc), decl.dtype, Buffer.SBUF, loc=c.loc))
        from cuda2nki.ir.nodes import Load

        b.emit(Load(T.whole(prior, mb, nc), View(c.target.tensor, dims), loc=c.loc))
        tot = b.fresh("total")
        b.emit(Alloc(tot, (mb, nc), "float32", Buffer.SBUF, loc=c.loc))
        b.emit(TensorTensor(T.whole(tot, mb, nc), Op.ADD, acc, T.whole(prior, mb, nc), loc=c.loc))
        total = T.whole(tot, mb, nc)
    res = b.fresh(f"{c.target.tensor}_out")
    b.emit(Alloc(res, (mb, nc), decl.dtype, Buffer.SBUF, loc=c.loc))
    b.emit(TensorCopy(T.whole(res, mb, nc), total, loc=c.loc))
    b.emit(Store(View(c.target.tensor, dims), T.whole(res, mb, nc), loc=c.loc))


def _bound(extent, n_ax: str, guard):
    """The element count: a guard conjunct ``index(n) < index(X)`` (the launch covering more
    threads than elements) bounds the element axis to ``min(extent, X)`` and leaves the guard."""
    if guard is None:
        return extent, None
    parts = _conjuncts(guard)
    for p in parts:
        if (
            isinstance(p, Binary)
            and p.op == Op.LT
            and p.a == IndexValue(Sym(n_ax))
            and isinstance(p.b, IndexValue)
            and n_ax not in p.b.expr.free_syms()
        ):
            rest = [q for q in parts if q is not p]
            left = None
            for q in rest:
                left = q if left is None else Binary(Op.LAND, left, q, loc=q.loc)
            return Min(extent, p.b.expr), left
    return extent, guard


def _conjuncts(e) -> list:
    if isinstance(e, Binary) and e.op == Op.LAND:
        return _conjuncts(e.a) + _conjuncts(e.b)
    return [e]


_NEGATED = {Op.LT: Op.GE, Op.GE: Op.LT, Op.LE: Op.GT, Op.GT: Op.LE, Op.EQ: Op.NE, Op.NE: Op.EQ}


def _push_not(e, kernel, neg: bool = False):
    """``!(k < 0 || k >= V)`` as ``k >= 0 && k < V`` (a padding id's early return): negations
    pushed onto integer comparisons, which the vector engine evaluates directly."""
    from cuda2nki.ir.nodes import Unary
    from cuda2nki.ir.types import TypeEnv

    if isinstance(e, Unary) and e.op == Op.LNOT:
        return _push_not(e.x, kernel, not neg)
    if isinstance(e, Binary) and e.op in (Op.LAND, Op.LOR):
        op = e.op if not neg else (Op.LOR if e.op == Op.LAND else Op.LAND)
        a, b = _push_not(e.a, kernel, neg), _push_not(e.b, kernel, neg)
        return Binary(op, a, b, loc=e.loc)
    if neg and isinstance(e, Binary) and e.op in _NEGATED:
        env = TypeEnv(kernel)
        if all("int" in env.dtype_of(x) for x in (e.a, e.b)):
            return Binary(_NEGATED[e.op], e.a, e.b, loc=e.loc)
    return Unary(Op.LNOT, e, loc=e.loc) if neg else e
