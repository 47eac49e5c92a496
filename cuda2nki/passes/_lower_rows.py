"""``lower-tiles`` for the ``rows`` layout: fused row loop nests of 128 partitions, their loads
(row, gathered, clipped, stepped) and ragged stores.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.ir.nodes import (
    Alloc,
    At,
    Binary,
    CeilDiv,
    Compute,
    Const,
    Dyn,
    Expr,
    IndexValue,
    Indirect,
    Lit,
    Load,
    Loop,
    Max,
    Memset,
    Min,
    Read,
    SizeExpr,
    Slice,
    Store,
    TensorCopy,
    View,
)
from cuda2nki.ir.ops import Buffer, Op, is_float
from cuda2nki.passes import _fold_columns as F
from cuda2nki.passes import _row_pick as row_pick
from cuda2nki.passes import _step_columns as S
from cuda2nki.passes import _tiles as T
from cuda2nki.passes import _window as W
from cuda2nki.passes._analysis import attrs, sym_names
from cuda2nki.passes._batch_order import shared_across_batch
from cuda2nki.passes._clamp import is_clamped
from cuda2nki.passes._clamp_load import HaloTaps, clamped_tile
from cuda2nki.passes._dyn_sum import dyn_terms, has_dyn
from cuda2nki.passes._flat_clip import clipped_rows, never_negative
from cuda2nki.passes._index import (
    BCAST,
    FLATROW,
    FULL,
    ROW,
    SCALAR,
    access_class,
    dims_for,
    flat_guard,
    plus,
)
from cuda2nki.passes._lower_common import (
    _cap,
    _free_extent,
    _guarded,
    _outer,
    _p_axis,
    _RowCompiler,
    itemsize,
)

if TYPE_CHECKING:
    from cuda2nki.passes.lower_tiles import _Lowering

    _Base = _Lowering
else:
    _Base = object


def _clip_under_select(dims) -> bool:
    """Whether a read under a select is loaded clipped to its tensor: a read with a fixed index
    (``in[0, x + dx]``) only where its moving dims are shifted from the tile's own place;
    unshifted (``att[b, r, c]`` under a causal mask) it is the plain load, which the other reads
    of that tile share."""
    if all(d.axis is not None for d in dims):
        return True
    return any(d.axis is not None and (d.k != 1 or d.c != Const(0)) for d in dims)


def _has_broadcast(group: list[Compute]) -> bool:
    from cuda2nki.passes._analysis import reads

    for c in group:
        p, f = _p_axis(c).name, attrs(c).get("f_axis", "")
        for rd in reads(c.expr):
            got = (
                access_class(rd.index, p, f)
                if not (rd.index and isinstance(rd.index[0], Dyn))
                else None
            )
            if got is not None and got[0] == BCAST:
                return True
    return False


def flat_rows_past_end(rd: Read, fr, nrows: SizeExpr, decl) -> SizeExpr | None:
    """The extent of the 1-D tensor ``rd`` reads as ``nrows`` rows ``x[K*p + f + c]`` when the
    last row may run past it (``K * nrows + c > extent`` for some sizes) or the first row may
    start before it (``c < 0``), else None."""
    from cuda2nki.passes.fold_sizes import fold_size

    if decl is None or len(decl.shape) != 1:
        return None
    extent = decl.shape[0]
    k = fr.k if isinstance(fr.k, SizeExpr) else Const(fr.k)  # a constant or a size
    over = fold_size(plus(k * nrows, fr.c) - extent)
    if isinstance(over, Const) and over.value <= 0 and never_negative(fr.c):
        return None
    return extent


def _flat_address(rd: Read, shape: tuple[SizeExpr, ...]) -> Expr:
    """The row-major element offset of ``rd`` as an int32 value: the affine indices folded into
    one index value, plus each data-dependent index times its dim's stride.  Computed with C's
    int32 semantics (exact past 2**24, where fp32 index arithmetic would round)."""
    fixed: SizeExpr = Const(0)
    data: list[Expr] = []
    for d, ix in enumerate(rd.index):
        stride: SizeExpr = Const(1)
        for n in shape[d + 1 :]:
            stride = n if stride == Const(1) else stride * n
        base, terms = dyn_terms(ix)
        for term in terms:
            if stride != Const(1):
                term = Binary(Op.MUL, term, IndexValue(stride, loc=rd.loc), loc=rd.loc)
            data.append(term)
        if base != Const(0):
            part = base if stride == Const(1) else base * stride
            fixed = part if fixed == Const(0) else fixed + part
    out: Expr = data[0]
    for term in data[1:]:
        out = Binary(Op.ADD, out, term, loc=rd.loc)
    if fixed != Const(0):
        out = Binary(Op.ADD, IndexValue(fixed, loc=rd.loc), out, loc=rd.loc)
    return out


class _RowsLowering(_Base):
    """The ``rows`` layout: methods mixed into the lowering (``lower_tiles._Lowering``)."""

    # ------------------------------------------------------------------ rows
    def lower_rows(self, group: list[Compute]) -> None:
        first = group[0]
        a = attrs(first)
        p_tile = int(a.get("p_tile", "128"))
        f_tile = max(int(attrs(c).get("f_tile", "0")) for c in group)
        whole_row = any(attrs(c).get("f_tile") == "0" for c in group)
        R = _p_axis(first).extent
        C = _free_extent(group)
        t = self.b.fresh("t")
        r0 = T.Const(p_tile) * T.Sym(t) if p_tile != 1 else T.Sym(t)
        rows = Min(p_tile, R - r0)
        outer = self.b.nested()
        inner = outer
        c0, cols = Const(0), (C if C is not None else Const(1))
        chunk_loop = None
        if C is not None and not whole_row and f_tile > 0:
            u = self.b.fresh("u")
            c0 = Const(f_tile) * T.Sym(u)
            cols = Min(f_tile, C - c0)
            inner = outer.nested()
            chunk_loop = (u, CeilDiv(C, f_tile))
        tiles: dict[str, T.Val] = {}
        loads: dict = {}
        for c in group:
            comp = self._compiler(inner, rows, cols, c, r0, c0, tiles)
            comp.cache = loads
            comp.spawn = self._spawner(inner, rows, c, r0, tiles, loads)
            guard = self._row_guard(c)
            if guard is not None:
                comp.flat_guard = (*guard, 0.0)  # padding past the end is never stored
                comp.cache = {}
            val = comp.compile(c.expr if guard is not None else _guarded(c))
            self._finish(inner, comp, c, val, tiles, r0, rows, c0, cols)
        tile_body = tuple(inner.stmts)
        batch = _outer(first)
        # batch loops inside the tile loops where a tile's operand is the same for every batch
        # element (loaded once per tile, see _batch_order)
        batch_inside = shared_across_batch(group, {a.name for a in batch})
        if batch_inside:
            for ax in reversed(batch):
                tile_body = (Loop(ax.name, 0, ax.extent, body=tile_body, loc=first.loc),)
        if chunk_loop is not None and _has_broadcast(group):
            # column chunks outermost: a row vector broadcast over partitions is loaded once per
            # chunk and reused by every row tile (hoist-loads lifts it out of the row loop)
            rows_loop = Loop(t, 0, CeilDiv(R, p_tile), body=tile_body, loc=first.loc)
            nest = Loop(chunk_loop[0], 0, chunk_loop[1], body=(rows_loop,), loc=first.loc)
        else:
            body = tile_body
            if chunk_loop is not None:
                body = (Loop(chunk_loop[0], 0, chunk_loop[1], body=tile_body, loc=first.loc),)
            nest = Loop(t, 0, CeilDiv(R, p_tile), body=body, loc=first.loc)
        for ax in reversed(batch if not batch_inside else ()):
            nest = Loop(ax.name, 0, ax.extent, body=(nest,), loc=first.loc)
        self.b.emit(nest)

    def _spawner(self, b, rows, c: Compute, r0, tiles, cache):
        """Compilers for reductions along another axis than the row's (a per-row value)."""

        def spawn(axis) -> T.TileExprCompiler:
            sub = self._compiler(b, rows, axis.extent, c, r0, Const(0), tiles, f_axis=axis.name)
            sub.cache = cache
            sub.spawn = spawn
            return sub

        return spawn

    def _compiler(
        self, b, rows, cols, c: Compute, r0, c0, tiles, f_axis=None
    ) -> T.TileExprCompiler:
        p_axis = _p_axis(c).name
        f_axis = attrs(c).get("f_axis", "") if f_axis is None else f_axis
        prows = Min(int(attrs(c).get("p_tile", "128")), _p_axis(c).extent)
        axes = frozenset(a for a in (p_axis, f_axis) if a)
        extents = {a.name: a.extent for a in c.domain.axes}
        halo = HaloTaps(c.expr, p_axis, f_axis, extents)

        def reader(rd: Read) -> T.Val:
            names = sym_names(rd.index) or ()
            if rd.tensor in tiles:
                v = tiles[rd.tensor]
                want = T.FULL if names == (p_axis, f_axis) and f_axis else T.ROW
                if names == (p_axis,) or names == (p_axis, f_axis):
                    return v if v.kind == want or v.kind == T.IMM else comp.as_full(v)
                raise T.Unsupported(f"temporary '{rd.tensor}' read across rows", rd.loc)
            if self.is_temp(rd.tensor):
                raise T.Unsupported(f"temporary '{rd.tensor}' read before it is written", rd.loc)
            dt = self.decl(rd.tensor).dtype
            if rd.index and isinstance(rd.index[0], Dyn):
                return self._gather(b, comp, rd, p_axis, f_axis, r0, rows, c0, cols, dt)
            if any(has_dyn(ix) for ix in rd.index):
                if row_pick.applies(rd, p_axis, f_axis):  # ``x[p, c(f)]``: see _row_pick
                    return row_pick.row_pick(self, b, comp, rd, p_axis, (r0, rows, c0, cols), dt)
                return self._element_gather(b, comp, rd, f_axis, rows, dt)
            box = (r0, rows, c0, cols)
            tap = halo.read(b, rd, box, dt) if f_axis else None
            if tap is not None:
                return tap
            if any(is_clamped(ix, axes) for ix in rd.index):
                clamped = clamped_tile(b, rd, p_axis, f_axis, box, dt)
                if clamped is None:
                    raise T.Unsupported(f"the clamped access pattern of '{rd.tensor}'", rd.loc)
                return clamped
            got = access_class(rd.index, p_axis, f_axis)
            if got is None:
                raise T.Unsupported(f"the access pattern of '{rd.tensor}'", rd.loc)
            cls, dims = got
            if cls == FLATROW:
                past = flat_rows_past_end(rd, dims[0], _p_axis(c).extent, self.decl(rd.tensor))
                return self._flat_row(b, comp, rd, dims[0], r0, rows, cols, dt, past)
            view = dims_for(dims, p_axis, f_axis, r0, rows, c0, cols)
            if comp.masked and cls in (FULL, ROW, BCAST) and _clip_under_select(dims):
                shape = (rows, Const(1) if cls == ROW else cols)
                kind = T.ROW if cls == ROW else T.FULL
                got = self._clipped_load(b, rd, shape, view, kind, dt, bcast=cls == BCAST)
                if got is not None:
                    return got
            if cls == FULL:
                return self._load(b, rd, (rows, cols), view, T.FULL, dt)
            if cls == ROW:
                fits = self._steps_fit(dt)
                steps = S.row_steps(b, comp.tap_loops, rd, view, rows, dt, fits)
                if steps is not None:
                    return steps
                return self._load(b, rd, (rows, Const(1)), view, T.ROW, dt)
            if cls == BCAST:
                fits = self._steps_fit(dt, S.BCAST_STEP_BYTES)
                steps = S.bcast_steps(b, comp.tap_loops, rd, view, rows, cols, dt, fits)
                if steps is not None:
                    return steps
                # broadcast over partitions: sized for the largest row tile so it can be hoisted
                v = self._load(b, rd, (prows, cols), view, T.FULL, dt)
                return T.Val(T.FULL, View(v.operand.tensor, (Slice(0, rows), Slice(0, cols))), dt)
            shape = self.decl(rd.tensor).shape
            tap = W.hoisted_tap(b, comp.tap_loops, rd, rows, dt, shape, alloc_rows=prows)
            if tap is not None:
                return tap
            return self._load(b, rd, (rows, Const(1)), view, T.ROW, dt)

        comp = self.typed(
            _RowCompiler(b, rows, cols, reader, self.params, self.ctx.diagnostics, c.loc)
        )
        comp.window_read = self._rect_reader(b, {p_axis: (r0, rows), f_axis: (c0, cols)}, comp)
        comp.p_axis, comp.f_axis = p_axis, f_axis
        comp.index_map = {p_axis: (1, 0, r0)}
        if f_axis:
            comp.index_map[f_axis] = (0, 1, c0)
        comp.full = (_cap(rows), _cap(cols))
        comp.loop_syms = frozenset(r0.free_syms() | c0.free_syms()) | {a.name for a in _outer(c)}
        return comp

    def _flat_row(self, b, comp, rd: Read, fr, r0, rows, cols, dt, past=None) -> T.Val:
        """``x[K*p + f + c]`` on a 1-D tensor: rows of K contiguous elements (K = the row length).
        Rows that may run past the tensor's end (``past``: its extent) are fetched clipped to it,
        the rest of the tile zero: a select the kernel wrote around the read does not pick those
        elements (``if (i < N) s[t] = x[i]; else s[t] = 0;`` in a block of 256 threads)."""
        if fr.k != cols:
            raise T.Unsupported(
                f"a flattened access of '{rd.tensor}' whose stride is not the row length", rd.loc
            )
        start = plus(fr.k * r0 if r0 != Const(0) else Const(0), fr.c)
        guard = comp.flat_guard
        if (guard is None or guard[0] != fr) and past is not None:
            guard = (fr, past, 0.0)
        if guard is None or guard[0] != fr:
            return self._load(b, rd, (rows, cols), (Slice(start, rows * cols),), T.FULL, dt)
        _, bound, ident = guard
        return clipped_rows(b, rd.tensor, start, (rows, cols), bound, ident, dt, rd.loc)

    def _gather(self, b, comp, rd: Read, p_axis, f_axis, r0, rows, c0, cols, dt) -> T.Val:
        """``table[idx(row), f]``: one index per partition, rows fetched by an indirect DMA."""
        if row_pick.applies(rd, p_axis, f_axis):  # ``table[r(row), c(col)]``: see _row_pick
            picked = row_pick.row_pick(self, b, comp, rd, p_axis, (r0, rows, c0, cols), dt)
            if picked is not None:
                return picked
        rest = access_class(rd.index[1:], p_axis, f_axis)
        if rest is None or rest[0] not in (BCAST, SCALAR):
            # ``x[t[i], i]``: not whole rows but one element per partition
            return self._element_gather(b, comp, rd, f_axis, rows, dt)
        comp.addressing, saved = True, comp.addressing  # index arithmetic (see passes/_ints)
        try:
            idx = comp.compile(rd.index[0].expr)
        finally:
            comp.addressing = saved
        idx = self._row_index(b, comp, rd, idx, rows)
        view = (Indirect(idx.operand), *dims_for(rest[1], p_axis, f_axis, r0, rows, c0, cols))
        free = cols if rest[0] == BCAST else Const(1)
        return self._load(b, rd, (rows, free), view, T.FULL if rest[0] == BCAST else T.ROW, dt)

    def _row_index(self, b, comp, rd: Read, idx: T.Val, rows) -> T.Val:
        """A gather's index as one int32 per partition (an indirect DMA's offsets)."""
        if idx.kind == T.FULL:
            raise T.Unsupported(
                f"a gather index of '{rd.tensor}' that varies along the row", rd.loc
            )
        idx = comp.materialize_row(idx)
        if idx.dtype == "int32":
            return idx
        name = b.fresh("idx")
        b.emit(Alloc(name, (rows, Const(1)), "int32", Buffer.SBUF, loc=rd.loc))
        b.emit(TensorCopy(T.whole(name, rows, 1), idx.operand, loc=rd.loc))
        return T.Val(T.ROW, T.whole(name, rows, 1), "int32")

    def _element_gather(self, b, comp, rd: Read, f_axis, rows, dt) -> T.Val:
        """``x[i, t[i]]``: one element per partition at a data-dependent position along a free
        dim -- an indirect DMA on the tensor read as a column of its elements, the row index
        of each partition its flat (row-major) element offset."""
        if f_axis and any(f_axis in dyn_terms(ix)[0].free_syms() for ix in rd.index):
            raise T.Unsupported(f"an element gather from '{rd.tensor}' along the row", rd.loc)
        idx = comp.compile(_flat_address(rd, self.decl(rd.tensor).shape))
        idx = self._row_index(b, comp, rd, idx, rows)
        view = (Indirect(idx.operand, flat=True),)
        return self._load(b, rd, (rows, Const(1)), view, T.ROW, dt)

    def _clipped_load(
        self, b: T.Builder, rd: Read, shape, dims, kind: str, dtype: str, bcast: bool = False
    ):
        """``_load`` of a read under a select, fetching only the elements inside the tensor
        (the others are zero, and the select does not pick them): each strided dim keeps the
        positions ``j`` with ``0 <= start + step * j < extent``, and a fixed index outside the
        tensor fetches nothing.  The view's slices are the tile's dims in order, or its rows
        only (a ``(rows, 1)`` tile), or (``bcast``) its free dim, the same on every partition.
        ``None``: another view (then the plain load)."""
        slices = [d for d in dims if isinstance(d, Slice)]
        one_col = not bcast and len(slices) == 1 and shape[1] == Const(1)
        if (
            any(not isinstance(d, Slice | At) for d in dims)
            or any(d.step <= 0 for d in slices)
            or not (one_col or len(slices) == (1 if bcast else len(shape)))
        ):
            return None
        name = b.fresh(f"{rd.tensor}_t")
        b.emit(Alloc(name, shape, dtype, Buffer.SBUF, loc=rd.loc))
        zero = Lit(0.0, "float32") if is_float(dtype) else Lit(0, dtype)  # an integer tile: 0
        b.emit(Memset(T.whole(name, *shape), zero, loc=rd.loc))
        dst, src, trips = [], [], None
        for d, extent in zip(dims, self.decl(rd.tensor).shape):
            if isinstance(d, At):  # one position: inside the tensor (1 trip) or not (none)
                inside = Min(Min(1, Max(0, extent - d.index)), Min(1, Max(0, d.index + 1)))
                src.append(d)
                trips = inside if trips is None else Min(trips, inside)
                continue
            k = Const(d.step)
            lo = Min(d.size, Max(Const(0), CeilDiv(Const(0) - d.start, k)))
            hi = Min(d.size, Max(lo, CeilDiv(extent - d.start, k)))
            dst.append(Slice(lo, hi - lo))
            src.append(Slice(plus(d.start, k * lo), hi - lo, d.step))
            trips = hi - lo if trips is None else Min(trips, hi - lo)
        if one_col:
            dst.append(Slice(Const(0), Const(1)))
        if bcast:
            dst.insert(0, Slice(Const(0), shape[0]))
        body = (Load(View(name, tuple(dst)), View(rd.tensor, tuple(src)), loc=rd.loc),)
        b.emit(Loop(b.fresh("g"), 0, Min(1, trips), body=body, loc=rd.loc))
        return T.Val(kind, T.whole(name, *shape), dtype)

    def _steps_fit(self, dtype: str, budget: int = S.STEP_BYTES):
        """Whether ``n`` elements per partition fit ``budget`` bytes at the binding's sizes."""

        def fits(n: SizeExpr) -> bool:
            try:
                need = int(n.evaluate(F.binding_env(self))) * itemsize(dtype)
            except Exception:  # sizes unknown without a binding
                return False
            return need <= budget

        return fits

    def _load(self, b: T.Builder, rd: Read, shape, dims, kind: str, dtype: str) -> T.Val:
        name = b.fresh(f"{rd.tensor}_t")
        b.emit(Alloc(name, shape, dtype, Buffer.SBUF, loc=rd.loc))
        dst = T.whole(name, *shape)
        b.emit(Load(dst, View(rd.tensor, tuple(dims)), loc=rd.loc))
        return T.Val(kind, dst, dtype)

    def _finish(self, b, comp, c: Compute, val: T.Val, tiles, r0, rows, c0, cols) -> None:
        if self.is_temp(c.target.tensor):
            tiles[c.target.tensor] = comp.materialize_row(val) if val.kind == T.IMM else val
            return
        p_axis, f_axis = _p_axis(c).name, attrs(c).get("f_axis", "")
        two_d = len(c.domain.axes) - len(_outer(c)) == 2
        got = access_class(c.target.index, p_axis, f_axis if two_d else "")
        if got is None:
            raise T.Unsupported(f"the write pattern of '{c.target.tensor}'", c.loc)
        cls, adims = got
        if cls == FLATROW:
            fr = adims[0]
            if fr.k != cols:
                raise T.Unsupported(
                    f"a flattened write of '{c.target.tensor}' whose stride is not the row length",
                    c.loc,
                )
            start = plus(fr.k * r0 if r0 != Const(0) else Const(0), fr.c)
            guard = self._row_guard(c)
            if guard is not None and guard[0] == fr:
                self._ragged_store(b, c, comp.as_full(val), start, guard[1], rows, cols)
                return
            dims = (Slice(start, rows * cols),)
            cls = FULL
        else:
            dims = dims_for(adims, p_axis, f_axis, r0, rows, c0, cols)
        if cls == FULL:
            val = comp.as_full(val)
        else:
            if val.kind == T.FULL:
                raise T.Unsupported("a per-row result that varies along the row", c.loc)
            val = comp.materialize_row(val)
        b.emit(Store(View(c.target.tensor, dims), val.operand, loc=c.loc))

    def _row_guard(self, c: Compute):
        """A domain guard ``index(K*p + f + c) < n`` of a row layout (ragged last row)."""
        if c.domain.guard is None:
            return None
        p_axis, f_axis = _p_axis(c).name, attrs(c).get("f_axis", "")
        return flat_guard(c.domain.guard, p_axis, f_axis)

    def _ragged_store(self, b, c: Compute, val: T.Val, start, bound, rows, cols) -> None:
        """Store whole rows, then the valid prefix of the last row; nothing past ``bound``."""
        avail = bound - start
        full = Min(rows, Max(0, avail // cols))
        src = val.operand.tensor
        whole_rows = b.nested()
        whole_rows.emit(
            Store(
                View(c.target.tensor, (Slice(start, full * cols),)),
                View(src, (Slice(0, full), Slice(0, cols))),
                loc=c.loc,
            )
        )
        b.emit(Loop(b.fresh("g"), 0, Min(1, full), body=tuple(whole_rows.stmts), loc=c.loc))
        rem = avail - full * cols
        tail = b.nested()
        tail.emit(
            Store(
                View(c.target.tensor, (Slice(start + full * cols, rem),)),
                View(src, (Slice(full, 1), Slice(0, rem))),
                loc=c.loc,
            )
        )
        b.emit(
            Loop(
                b.fresh("g"),
                0,
                Min(rows - full, Min(1, Max(rem, 0))),
                body=tuple(tail.stmts),
                loc=c.loc,
            )
        )
