"""``lower-tiles``: intent Computes -> scheduled tiles (loops, SBUF/PSUM tiles, DMAs, engine ops).

Before::  y[i, j] = x[i, j] * g[j]   for i < R, j < C      layout=rows p_tile=128 f_tile=4096
After::   for t in range(ceil(R/128)):                       # CUDA's grid becomes this loop
              for u in range(ceil(C/4096)):
                  x_t: sbuf[min(128, R-128t), min(4096, C-4096u)] <- dma x[...]
                  g_t: sbuf[same] <- dma g[...] broadcast over partitions
                  mul = x_t * g_t ; dma y[...] <- mul

CUDA's thread/block indexing disappears: each layout walks its domain in partition-major tiles
(rows of 128 on partitions), ragged tails are ``Min(tile, extent - start)`` sizes, intent
temporaries (CUDA shared memory, per-row statistics) live in SBUF tiles, accumulators in PSUM
(fp32).  Consecutive ``rows`` Computes over the same rows are fused into one loop nest so their
temporaries never leave the chip.  A Load/Store whose HBM view has another rank than its tile
reshapes row-major (equal element counts) or, for a ``[P, F]`` tile fed by an ``F``-element view,
broadcasts over partitions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from cuda2nki.diagnostics import SourceLoc
from cuda2nki.ir import uniform
from cuda2nki.ir.nodes import (
    Alloc,
    At,
    Axis,
    Binary,
    Cast,
    CeilDiv,
    Compute,
    Const,
    Dyn,
    Expr,
    FloorDiv,
    IndexValue,
    Indirect,
    Iterate,
    Kernel,
    Lit,
    Load,
    Loop,
    Matmul,
    Max,
    Memset,
    Min,
    Note,
    Read,
    Reduce,
    ScalarDecl,
    Scan,
    SizeExpr,
    Slice,
    Store,
    Sym,
    TensorCopy,
    TensorDecl,
    TensorReduce,
    TensorScan,
    TensorTensor,
    TensorTranspose,
    View,
)
from cuda2nki.ir.ops import Buffer, Idiom, LoopKind, Op
from cuda2nki.ir.types import TypeEnv
from cuda2nki.passes import _fold_columns as F
from cuda2nki.passes import _row_pick as row_pick
from cuda2nki.passes import _step_columns as S
from cuda2nki.passes import _tiles as T
from cuda2nki.passes import _window as W
from cuda2nki.passes._analysis import (
    alpha_key,
    attrs,
    contractions,
    moves_along,
    outermost,
    strip_cast,
    sym_names,
    transform,
)
from cuda2nki.passes._batch_order import shared_across_batch
from cuda2nki.passes._clamp import is_clamped
from cuda2nki.passes._clamp_load import HaloTaps, clamped_tile
from cuda2nki.passes._dyn_sum import dyn_terms, has_dyn
from cuda2nki.passes._index import (
    BCAST,
    FLATROW,
    FULL,
    ROW,
    SCALAR,
    access_class,
    dims_for,
    flat_guard,
    flat_record_ok,
    plus,
)
from cuda2nki.passes._merged_rows import merged_class, rows_of
from cuda2nki.passes._permute_merge import lower_merged, merged_axis
from cuda2nki.passes._wide_rows import ROW_CHUNK, transposed_rows
from cuda2nki.passes.base import Pass, PassContext
from cuda2nki.rewrite import nodes


@dataclass(frozen=True)
class LowerTilesPass(Pass):
    name: ClassVar[str] = "lower-tiles"

    def run(self, kernel: Kernel, ctx: PassContext) -> Kernel:
        if kernel.is_scheduled:
            return kernel
        lw = _Lowering(kernel, ctx)
        reserved = [p.name for p in kernel.params] + [t.name for t in kernel.temps]
        reserved += [a.name for c in kernel.body if isinstance(c, Compute) for a in c.domain.axes]
        reserved += ["nki", "nl", "nisa", "np", "min", "max", "range"]
        lw.b.used.update({name: 1 for name in reserved})
        lw.b.used.update({f"{name}_out": 1 for name in reserved})
        body, conds = _split_uniform(kernel)
        for group in _groups(kernel.replace(body=body), conds):
            mark = len(lw.b.stmts)
            lw.lower_group(group)
            cond = conds.get(id(group[0]))
            if cond is not None:  # decided when the kernel is traced: one Python `if`
                inner = tuple(lw.b.stmts[mark:])
                del lw.b.stmts[mark:]
                lw.b.stmts.append(
                    Loop("_when", Const(0), Const(1), 1, body=inner, loc=group[0].loc, cond=cond)
                )
        idioms = sorted({c.idiom.value for c in kernel.body if isinstance(c, Compute)})
        extra = (("idiom", ",".join(idioms)),) if idioms else ()
        return Kernel(
            kernel.name,
            kernel.params,
            body=tuple(lw.b.stmts),
            attrs=tuple(dict(kernel.attrs + extra).items()),
            loc=kernel.loc,
        )


def _split_uniform(kernel: Kernel) -> tuple[tuple, dict[int, Expr]]:
    """The body with each statement's guard conjuncts on scalar parameters alone taken out, and
    those conditions by statement (``id``): a flag the CUDA kernel tests in every thread is one
    branch of the port, taken when the kernel is traced."""
    scalars = set(kernel.scalars)
    body: list = []
    conds: dict[int, Expr] = {}
    for c in kernel.body:
        uni, rest = uniform.split(c.domain.guard if isinstance(c, Compute) else None, scalars)
        if uni is not None:
            c = c.replace(domain=c.domain.replace(guard=rest))
            conds[id(c)] = uni
        body.append(c)
    return tuple(body), conds


def _groups(kernel: Kernel, conds: dict[int, Expr] | None = None) -> list[list[Compute]]:
    conds = conds or {}
    groups: list[list[Compute]] = []
    for c in kernel.body:
        if not isinstance(c, Compute):
            continue
        a = attrs(c)
        prev = groups[-1] if groups else None
        if prev is not None and conds.get(id(prev[0])) != conds.get(id(c)):
            groups.append([c])
        elif (
            prev is not None
            and a.get("layout") == "rows"
            and attrs(prev[0]).get("layout") == "rows"
            and _rows_extent(prev[0]) == _rows_extent(c)
        ):
            prev.append(c)
        elif prev is not None and _shares_iteration(prev[0], c):
            prev.append(_renamed(c, prev[0].domain.axes[0].name))
        else:
            groups.append([c])
    return groups


def _flat_loops(c: Compute) -> set:
    """The iterations (results aside, the axis renamed) a flat statement computes."""
    from cuda2nki.passes._analysis import walk

    if attrs(c).get("layout") != "flat" or c.domain.guard is not None:
        return set()
    e = _renamed(c, "%flat").expr
    return {alpha_key(x.with_result("")) for x in walk(e) if isinstance(x, Iterate)}


def _shares_iteration(first: Compute, c: Compute) -> bool:
    """Flat statements over one domain that read the same iteration (its variables' results):
    one chunk loop computes them together, so the iteration runs once."""
    if len(c.domain.axes) != 1 or len(first.domain.axes) != 1:
        return False
    same = (c.domain.axes[0].extent, attrs(c).get("p_tile"), attrs(c).get("f_tile")) == (
        first.domain.axes[0].extent,
        attrs(first).get("p_tile"),
        attrs(first).get("f_tile"),
    )
    return same and bool(_flat_loops(first) & _flat_loops(c))


def _renamed(c: Compute, axis: str) -> Compute:
    """``c`` with its (single) domain axis called ``axis``."""
    old = c.domain.axes[0].name
    if old == axis:
        return c

    def fn(x):  # noqa: ANN001, ANN202
        return Sym(axis) if isinstance(x, Sym) and x.name == old else x

    return c.replace(
        target=transform(c.target, fn),
        domain=c.domain.replace(axes=(c.domain.axes[0].replace(name=axis),)),
        expr=transform(c.expr, fn),
    )


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


def _rows_extent(c: Compute):
    """Statements fuse into one row loop nest when rows, outer loops and row length agree."""
    return (_p_axis(c).extent, tuple((a.name, a.extent) for a in _outer(c)), _free_extent([c]))


@dataclass
class _Lowering:
    kernel: Kernel
    ctx: PassContext
    b: T.Builder = field(default_factory=T.Builder)

    @property
    def params(self) -> dict[str, str]:
        return {p.name: p.dtype for p in self.kernel.params if isinstance(p, ScalarDecl)}

    def decl(self, name: str) -> TensorDecl:
        return self.kernel.tensors[name]

    def typed(self, comp: T.TileExprCompiler) -> T.TileExprCompiler:
        """``comp`` told the kernel's types and size parameters (exact integer operations)."""
        comp.types = TypeEnv(self.kernel)
        comp.sizes = size_params(self.kernel)
        return comp

    def is_temp(self, name: str) -> bool:
        return any(t.name == name for t in self.kernel.temps)

    def lower_group(self, group: list[Compute]) -> None:
        layout = attrs(group[0]).get("layout", "")
        if any(c.idiom == Idiom.LITERAL for c in group):
            reason = "no idiom recogniser claimed this statement; check the port by hand"
            self.ctx.note("C2N2500", group[0].loc, kernel=self.kernel.name, reason=reason)
            self.b.emit(
                Note("C2N2500", f"literal translation of CUDA threads ({reason})", loc=group[0].loc)
            )
        try:
            if layout == "rows":
                self.lower_rows(group)
            elif layout == "flat":
                self.lower_flat(group)
            elif layout == "matmul":
                self.lower_matmul(group[0])
            elif layout == "transpose":
                self.lower_transpose(group[0])
            elif layout == "reduce-all":
                self.lower_reduce_all(group[0])
            elif layout == "colreduce":
                self.lower_colreduce(group[0])
            elif layout == "scalar":
                self.lower_scalar(group[0])
            elif layout == "scatter":
                from cuda2nki.passes._scatter import lower_scatter

                lower_scatter(self, group[0])
            else:
                why = attrs(group[0]).get("why", "no layout chosen (run choose-layout first)")
                raise T.Unsupported(why, group[0].loc)
        except T.Unsupported as exc:
            raise T.unsupported_error(self.kernel.name, exc, group[0].loc) from None

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
                return self._flat_row(b, comp, rd, dims[0], r0, rows, cols, dt)
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

    def _flat_row(self, b, comp, rd: Read, fr, r0, rows, cols, dt) -> T.Val:
        """``x[K*p + f + c]`` on a 1-D tensor: rows of K contiguous elements (K = the row length)."""
        if fr.k != cols:
            raise T.Unsupported(
                f"a flattened access of '{rd.tensor}' whose stride is not the row length", rd.loc
            )
        start = plus(fr.k * r0 if r0 != Const(0) else Const(0), fr.c)
        guard = comp.flat_guard
        if guard is None or guard[0] != fr:
            return self._load(b, rd, (rows, cols), (Slice(start, rows * cols),), T.FULL, dt)
        _, bound, ident = guard
        name = b.fresh(f"{rd.tensor}_t")
        b.emit(Alloc(name, (rows, cols), dt, Buffer.SBUF, loc=rd.loc))
        b.emit(Memset(T.whole(name, rows, cols), Lit(ident, "float32"), loc=rd.loc))
        avail = bound - start  # elements of the tensor from this tile's first row on
        full = Min(rows, Max(0, avail // cols))
        whole_rows = b.nested()
        whole_rows.emit(
            Load(
                View(name, (Slice(0, full), Slice(0, cols))),
                View(rd.tensor, (Slice(start, full * cols),)),
                loc=rd.loc,
            )
        )
        b.emit(Loop(b.fresh("g"), 0, Min(1, full), body=tuple(whole_rows.stmts), loc=rd.loc))
        rem = avail - full * cols
        tail = b.nested()
        tail.emit(
            Load(
                View(name, (Slice(full, 1), Slice(0, rem))),
                View(rd.tensor, (Slice(start + full * cols, rem),)),
                loc=rd.loc,
            )
        )
        stop = Min(rows - full, Min(1, Max(rem, 0)))
        b.emit(Loop(b.fresh("g"), 0, stop, body=tuple(tail.stmts), loc=rd.loc))
        return T.Val(T.FULL, T.whole(name, rows, cols), dt)

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
        b.emit(Memset(T.whole(name, *shape), Lit(0.0, "float32"), loc=rd.loc))
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

    # ------------------------------------------------------------------ flat 1-D
    def lower_flat(self, group: list[Compute]) -> None:
        """Flat 1-D chunks; the statements of a group (they share an iteration) are computed in
        the same chunks, from one cache."""
        c = group[0]
        P = int(attrs(c).get("p_tile", "128"))
        F0 = int(attrs(c).get("f_tile", "512"))
        N = c.domain.axes[0].extent
        # Rows at most F0 wide, but a vector shorter than P * F0 is spread over the partitions
        # (an engine instruction costs the same on 1 or 128 of them): F = ceil(N / P) makes one
        # [N // F, F] tile of at most P rows plus a [1, N % F] tail (N = 3000: [125, 24]).
        # Index values need a constant row length (an iota's partition stride): F0 then.
        index = any(_uses_index_value(x) for x in group)
        F: SizeExpr = Const(F0) if index else Min(F0, Max(1, CeilDiv(N, P)))
        chunk = P * F
        full = N // chunk
        rem = N % chunk
        parts = [
            (full, lambda v: chunk * T.Sym(v), Const(P), F),
            (Min(1, rem // F), lambda v: full * chunk, rem // F, F),
            (Min(1, N % F), lambda v: N - N % F, Const(1), N % F),
        ]
        for stop, base_of, rows, cols in parts:
            v = self.b.fresh("t")
            base = base_of(v)
            inner = self.b.nested()
            cache: dict = {}
            for x in group:
                comp = self._flat_compiler(inner, rows, cols, x, base)
                comp.cache = cache
                val = comp.as_full(comp.compile(_guarded(x)))
                _, tdims = access_class(x.target.index, x.domain.axes[0].name, "")
                view = tuple(  # the chunk, or a field of its records (the record's stride)
                    Slice(plus(d.k * base if d.k != 1 else base, d.c), rows * cols, d.k)
                    if d.axis
                    else At(d.c)
                    for d in tdims
                )
                inner.emit(Store(View(x.target.tensor, view), val.operand, loc=x.loc))
            self.b.emit(Loop(v, 0, stop, body=tuple(inner.stmts), loc=c.loc))

    def _flat_compiler(self, b, rows, cols, c: Compute, base, axis: str = "") -> T.TileExprCompiler:
        i = axis or c.domain.axes[0].name

        def reader(rd: Read) -> T.Val:
            dt = self.decl(rd.tensor).dtype
            got = access_class(rd.index, i, "")
            if got is None:
                raise T.Unsupported(f"the access pattern of '{rd.tensor}'", rd.loc)
            cls, dims = got
            if cls == ROW and flat_record_ok(dims):  # the chunk, or a field of its records
                view = tuple(
                    Slice(plus(d.k * base if d.k != 1 else base, d.c), rows * cols, d.k)
                    if d.axis
                    else At(d.c)
                    for d in dims
                )
                return self._load(b, rd, (rows, cols), view, T.FULL, dt)
            if cls == SCALAR:
                shape = self.decl(rd.tensor).shape
                tap = W.hoisted_tap(b, comp.tap_loops, rd, rows, dt, shape)
                if tap is not None:
                    return tap
                view = tuple(At(d.c) for d in dims)
                return self._load(b, rd, (rows, Const(1)), view, T.ROW, dt)
            raise T.Unsupported(f"the access pattern of '{rd.tensor}'", rd.loc)

        comp = self.typed(
            _RowCompiler(b, rows, cols, reader, self.params, self.ctx.diagnostics, c.loc)
        )
        comp.window_read = self._window_reader(b, i, base, rows, cols, comp)
        # i = base + cols * p + f on this [rows, cols] chunk
        kp = cols.value if isinstance(cols, Const) else (0 if rows == Const(1) else None)
        comp.index_map = {i: (kp, 1, base)}
        comp.full = (_cap(rows), _cap(cols))
        comp.loop_syms = frozenset(base.free_syms())
        return comp

    def _rect_reader(self, b, tile: dict, comp=None):
        """Zero-padded neighbour reads on a row tile (``i > 0 ? x[i - 1, j] : 0``): the tile
        filled with the pad value, the in-bounds rectangle fetched (see _window)."""
        tile = {ax: v for ax, v in tile.items() if ax}

        def read(e) -> T.Val | None:
            got = W.rect_bounds(e, tile)
            if got is None or len(got[1]) != 2 or self.is_temp(got[0].tensor):
                return None
            rd, dims, pad = got
            decl = self.decl(rd.tensor)
            loops = comp.tap_loops if comp is not None else []
            tap = W.halo_rect(b, loops, rd, dims, pad, tile, decl.shape, decl.dtype)
            if tap is not None:
                return tap
            return W.padded_rect(b, rd, dims, pad, tile, decl.shape, decl.dtype)

        return read

    def _window_reader(self, b, i: str, base, rows, cols, comp=None):
        """Shifted neighbour reads with a padded boundary on a flat chunk (see _window)."""

        def read(e) -> T.Val | None:
            got = W.window_bounds(e, i)
            if got is None:
                return None
            rd, shift, lo, hi, pad = got
            decl = self.decl(rd.tensor)
            if len(decl.shape) != 1 or self.is_temp(rd.tensor):
                return None
            size, dt = decl.shape[0], decl.dtype
            loops = comp.tap_loops if comp is not None else []
            tap = W.halo_tap(b, loops, rd, shift, lo, hi, pad, base, rows, cols, size, dt)
            if tap is not None:
                return tap
            return W.padded_read(b, rd, shift, lo, hi, pad, base, rows, cols, size, dt)

        return read

    # ------------------------------------------------------------------ reduce-all
    def lower_reduce_all(self, c: Compute) -> None:
        """Whole-vector reduction: flat [128, F] chunks reduced along the free axis into a
        [128, 1] fp32 accumulator, then across partitions (tensor-engine transpose + reduce)."""
        P, F0 = int(attrs(c).get("p_tile", "128")), int(attrs(c).get("f_tile", "4096"))
        if c.accumulate is not None and c.domain.axes:
            op, k_axis, body = c.accumulate, c.domain.axes[0], c.expr
            red = Reduce(op, (k_axis,), body, loc=c.loc)
        else:
            (red,) = outermost(_reduces(c.expr))  # nested ones: loops inside each chunk
            op, k_axis, body = red.op, red.axes[0], red.body
        acc = self.b.fresh("acc")
        self.b.emit(Alloc(acc, (Const(P), Const(1)), "float32", Buffer.SBUF, loc=c.loc))
        self.b.emit(Memset(T.whole(acc, P, 1), Lit(float(op.info.identity), "float32"), loc=c.loc))
        K = k_axis.extent
        # As for 1-D maps, a vector shorter than P * F0 spreads over the partitions.  Only in the
        # current API: the legacy form allocates F0-wide tiles and masks them, and its masked
        # free-axis reduction would take the masked-off columns in.
        spread = self.ctx.target == "nki" and not _uses_index_value(c)
        F: SizeExpr = Min(F0, Max(1, CeilDiv(K, P))) if spread else Const(F0)
        chunk = P * F
        parts = [
            (K // chunk, lambda v: chunk * T.Sym(v), Const(P), F),
            (Min(1, (K % chunk) // F), lambda v: (K // chunk) * chunk, (K % chunk) // F, F),
            (Min(1, K % F), lambda v: K - K % F, Const(1), K % F),
        ]
        for stop, base_of, rows, cols in parts:
            v = self.b.fresh("t")
            inner = self.b.nested()
            comp = self._flat_compiler(inner, rows, cols, c, base_of(v), axis=k_axis.name)
            part = comp.reduce_of(red)
            acc_v = View(acc, (Slice(0, rows), Slice(0, 1)))
            inner.emit(TensorTensor(acc_v, op, acc_v, part.operand, loc=c.loc))
            self.b.emit(
                Loop(v, 0, stop, kind=LoopKind.SEQUENTIAL, body=tuple(inner.stmts), loc=c.loc)
            )
        tp = self.b.fresh("acc_tp")
        self.b.emit(Alloc(tp, (Const(1), Const(P)), "float32", Buffer.PSUM, loc=c.loc))
        self.b.emit(TensorTranspose(T.whole(tp, 1, P), T.whole(acc, P, 1), loc=c.loc))
        total = self.b.fresh("total")
        self.b.emit(Alloc(total, (Const(1), Const(1)), "float32", Buffer.SBUF, loc=c.loc))
        self.b.emit(TensorReduce(T.whole(total, 1, 1), op, T.whole(tp, 1, P), axes=(1,), loc=c.loc))
        self._reduce_epilogue(c, red, op, T.Val(T.ROW, T.whole(total, 1, 1)))

    def _reduce_epilogue(self, c: Compute, red: Reduce, op, total: T.Val) -> None:
        b = self.b
        dims = tuple(Slice(d.c, 1) for d in access_class(c.target.index, "", "")[1])

        def reader(rd: Read) -> T.Val:
            got = access_class(rd.index, "", "")
            if got is None or got[0] != SCALAR:
                raise T.Unsupported(f"the access pattern of '{rd.tensor}'", rd.loc)
            view = tuple(Slice(d.c, 1) for d in got[1])
            return self._load(b, rd, (Const(1), Const(1)), view, T.ROW, self.decl(rd.tensor).dtype)

        comp = _EpilogueCompiler(
            b, Const(1), Const(1), reader, self.params, self.ctx.diagnostics, c.loc
        )
        comp.result, comp.acc = red, total.operand
        expr = c.expr
        if c.accumulate is not None:  # into the element: the domain's total, or a value of it
            add = red if c.domain.axes else c.expr
            expr = Binary(c.accumulate, Read(c.target.tensor, c.target.index), add)
        val = comp.materialize_row(comp.compile(expr))
        b.emit(Store(View(c.target.tensor, dims), val.operand, loc=c.loc))

    # ------------------------------------------------------------------ one element
    def lower_scalar(self, c: Compute) -> None:
        """A statement without an iteration domain on a [1, 1] tile; its guard (a condition on
        scalar sizes, ``n % 2 != 0``) becomes a loop of 0 or 1 trips."""
        trips = Const(1) if c.domain.guard is None else guard_trips(c.domain.guard)
        if trips is None:
            raise T.Unsupported("a guard on a single element that is not a size comparison", c.loc)
        b = self.b.nested()
        one = Const(1)

        def reader(rd: Read) -> T.Val:
            # a fixed element past a small tensor's end is only ever read by a select branch
            # that is not taken (CUDA never reads it): clamp it into the tensor
            shape = self.decl(rd.tensor).shape
            dims = access_class(rd.index, "", "")[1]
            view = tuple(
                Slice(Min(d.c, n - 1) if isinstance(d.c, Const) and d.c.value > 0 else d.c, 1)
                for d, n in zip(dims, shape)
            )
            return self._load(b, rd, (one, one), view, T.ROW, self.decl(rd.tensor).dtype)

        comp = self.typed(
            _RowCompiler(b, one, one, reader, self.params, self.ctx.diagnostics, c.loc)
        )
        val = comp.materialize_row(comp.compile(c.expr))
        dt = self.decl(c.target.tensor).dtype
        if val.dtype != dt:
            res = b.fresh(f"{c.target.tensor}_t")
            b.emit(Alloc(res, (one, one), dt, Buffer.SBUF, loc=c.loc))
            b.emit(TensorCopy(T.whole(res, 1, 1), val.operand, loc=c.loc))
            val = T.Val(T.ROW, T.whole(res, 1, 1), dt)
        dims = tuple(Slice(d.c, 1) for d in access_class(c.target.index, "", "")[1])
        b.emit(Store(View(c.target.tensor, dims), val.operand, loc=c.loc))
        if trips == Const(1):
            self.b.stmts.extend(b.stmts)
        else:
            self.b.emit(Loop(self.b.fresh("g"), 0, trips, body=tuple(b.stmts), loc=c.loc))

    # ------------------------------------------------------------------ column reduction
    def lower_colreduce(self, c: Compute) -> None:
        """``y[j] = reduce(op, i: f(x[i, j]))`` with ``i`` on partitions.  A sum is a matmul with a
        ones vector accumulated over row tiles in PSUM; max/min combine row tiles elementwise and
        finish across partitions through a tensor-engine transpose."""
        a = attrs(c)
        red = _reduces(c.expr)
        i_ax, j_ax = red[0].axes[0], c.domain.axes[0]
        P = int(a.get("p_tile", "128"))
        sums = all(r.op == Op.ADD for r in red)
        if not sums and self.ctx.target == "legacy":
            # the max/min path updates the first rows of a 128-row tile in its last, partial
            # row tile; the legacy API writes a masked instruction's result whole, so the other
            # rows (earlier tiles' maxima) would take the padding in
            raise T.Unsupported("a column max/min in the legacy API", c.loc)
        TN = int(a.get("n_tile", "512")) if sums else P
        fold = F.plan(self, c, red, i_ax, j_ax, P, TN)
        if fold is not None and F.lower(self, c, red, fold):
            return
        R, C = i_ax.extent, j_ax.extent
        u = self.b.fresh("u")
        c0 = T.Const(TN) * T.Sym(u)
        ns = Min(TN, C - c0)
        nb = self.b.nested()
        accs: dict = {}
        for r in red:
            if r in accs:
                continue
            if r.op == Op.ADD:
                acc = self._colsum(nb, c, r, i_ax.name, j_ax.name, R, P, c0, ns)
            else:
                acc = self._colcombine(nb, c, r, i_ax.name, j_ax.name, R, P, c0, ns)
            accs[r] = acc
        acc = accs[red[0]]
        per_column = self._per_column_reader(nb, j_ax.name, acc, c0, ns)
        comp = _EpilogueCompiler(
            nb, acc.rows, acc.cols, per_column, self.params, self.ctx.diagnostics, c.loc
        )
        comp.result, comp.acc, comp.kind = red[0], acc.view, T.FULL
        comp.others = {r: v.view for r, v in accs.items()}
        val = comp.compile(c.expr)
        res = nb.fresh(f"{c.target.tensor}_t")
        out_dt = self.decl(c.target.tensor).dtype
        nb.emit(Alloc(res, (acc.rows, acc.cols), out_dt, Buffer.SBUF, loc=c.loc))
        nb.emit(TensorCopy(T.whole(res, acc.rows, acc.cols), val.operand, loc=c.loc))
        _, tdims = access_class(c.target.index, j_ax.name, "")
        dims = dims_for(tdims, j_ax.name, "", c0, ns, Const(0), Const(1))
        nb.emit(Store(View(c.target.tensor, dims), T.whole(res, acc.rows, acc.cols), loc=c.loc))
        self.b.emit(Loop(u, 0, CeilDiv(C, TN), body=tuple(nb.stmts), loc=c.loc))

    def _per_column_reader(self, b: T.Builder, j: str, acc: _Acc, c0, ns):
        """Reads of an epilogue around column sums: one value per column (``dbias[j]``),
        loaded in the accumulator's orientation (a row of sums, or a column of maxima)."""

        def reader(rd: Read) -> T.Val:
            got = access_class(rd.index, j, "")
            if got is None or got[0] != ROW:
                return _no_reads(rd)
            dims = dims_for(got[1], j, "", c0, ns, Const(0), Const(1))
            kind = T.ROW if acc.cols == Const(1) else T.FULL
            return self._load(b, rd, (acc.rows, acc.cols), dims, kind, self.decl(rd.tensor).dtype)

        return reader

    def _row_tile_body(self, b, c, r, i, j, r0, rows, c0, ns) -> T.Val:
        def reader(rd: Read) -> T.Val:
            got = access_class(rd.index, i, j)
            merged = None
            if got is None:  # a read through merged rows: one strided block of the flat tensor
                cls, dims, merged = merged_class(rd.index, self.decl(rd.tensor).shape, i, j)
            else:
                cls, dims = got
            view = dims_for(dims, i, j, r0, rows, c0, ns)
            if merged is not None:
                view = rows_of(view, merged)
            if cls == ROW:  # x[i]: one value per partition, the same along the row (A^T x)
                return self._load(b, rd, (rows, Const(1)), view, T.ROW, self.decl(rd.tensor).dtype)
            return self._load(b, rd, (rows, ns), view, T.FULL, self.decl(rd.tensor).dtype)

        comp = self.typed(
            _RowCompiler(b, rows, ns, reader, self.params, self.ctx.diagnostics, c.loc)
        )
        return comp.as_full(comp.compile(r.body))

    def _colsum(self, nb, c, r, i, j, R, P, c0, ns) -> _Acc:
        """Column sums as ``ones^T @ body``: a ``(1, ns)`` row accumulated in PSUM."""
        acc = nb.fresh("acc")
        shape = (Const(1), ns)
        nb.emit(Alloc(acc, shape, "float32", Buffer.PSUM, loc=c.loc))
        acc_v = T.whole(acc, *shape)
        for first in (True, False):
            kb = nb.nested()
            t = None if first else nb.fresh("t")
            r0 = Const(0) if first else T.Const(P) * T.Sym(t)
            rows = Min(P, R - r0) if not first else Min(P, R)
            body = self._row_tile_body(kb, c, r, i, j, r0, rows, c0, ns)
            ones = kb.fresh("ones")
            kb.emit(Alloc(ones, (rows, Const(1)), body.dtype, Buffer.SBUF, loc=c.loc))
            kb.emit(Memset(T.whole(ones, rows, 1), Lit(1.0, "float32"), loc=c.loc))
            kb.emit(
                Matmul(acc_v, T.whole(ones, rows, 1), body.operand, accumulate=not first, loc=c.loc)
            )
            if first:
                nb.stmts.extend(kb.stmts)
            else:
                nb.emit(
                    Loop(
                        t,
                        1,
                        CeilDiv(R, P),
                        kind=LoopKind.SEQUENTIAL,
                        body=tuple(kb.stmts),
                        loc=c.loc,
                    )
                )
        return _Acc(acc_v, *shape)

    def _colcombine(self, nb, c, r, i, j, R, P, c0, ns) -> _Acc:
        part = nb.fresh("part")
        nb.emit(Alloc(part, (Const(P), ns), "float32", Buffer.SBUF, loc=c.loc))
        nb.emit(Memset(T.whole(part, P, ns), Lit(float(r.op.info.identity), "float32"), loc=c.loc))
        t = nb.fresh("t")
        kb = nb.nested()
        r0 = T.Const(P) * T.Sym(t)
        rows = Min(P, R - r0)
        body = self._row_tile_body(kb, c, r, i, j, r0, rows, c0, ns)
        pv = View(part, (Slice(0, rows), Slice(0, ns)))
        kb.emit(TensorTensor(pv, r.op, pv, body.operand, loc=c.loc))
        nb.emit(
            Loop(t, 0, CeilDiv(R, P), kind=LoopKind.SEQUENTIAL, body=tuple(kb.stmts), loc=c.loc)
        )
        tp = nb.fresh("part_tp")
        nb.emit(Alloc(tp, (ns, Const(P)), "float32", Buffer.PSUM, loc=c.loc))
        nb.emit(TensorTranspose(T.whole(tp, ns, P), T.whole(part, P, ns), loc=c.loc))
        acc = nb.fresh("acc")
        nb.emit(Alloc(acc, (ns, Const(1)), "float32", Buffer.SBUF, loc=c.loc))
        nb.emit(TensorReduce(T.whole(acc, ns, 1), r.op, T.whole(tp, ns, P), axes=(1,), loc=c.loc))
        return _Acc(T.whole(acc, ns, 1), ns, Const(1))

    # ------------------------------------------------------------------ matmul
    def lower_matmul(self, c: Compute) -> None:
        _Matmul(self, c).lower()

    # ------------------------------------------------------------------ transpose
    def lower_transpose(self, c: Compute) -> None:
        """``out[j, i] = src[i, j]`` through the tensor engine, in groups of row blocks.

        A group is up to ``TRANSPOSE_GROUP`` blocks of 128 source rows, each loaded whole (every
        column) by one DMA; per block of 128 source columns, the group's blocks are transposed
        side by side into one PSUM bank and stored by one DMA of up to 2 KiB per partition."""
        src = strip_cast(c.expr)
        if not isinstance(src, Read) or sym_names(src.index) is None:
            raise T.Unsupported("a transpose that also computes", c.loc)
        P = int(attrs(c).get("p_tile", "128"))
        outer = _outer(c)
        fixed = {a.name for a in outer}
        names = sym_names(src.index)
        a_name, b_name = [n for n in names if n not in fixed]  # source rows, source columns
        merge = merged_axis(
            names,
            sym_names(c.target.index) or (),
            fixed,
            {a.name: a.extent for a in c.domain.axes},
            (self.decl(src.tensor), self.decl(c.target.tensor)),
        )
        if merge is not None and merge.a == a_name and merge.b == b_name:
            return lower_merged(self, c, src, merge, outer, TRANSPOSE_GROUP)
        ext_i, ext_j = _axis(c, a_name).extent, _axis(c, b_name).extent
        GP = P * TRANSPOSE_GROUP
        tg, ti, tj = self.b.fresh("g"), self.b.fresh("t"), self.b.fresh("u")
        g0 = T.Const(GP) * T.Sym(tg)
        gs = Min(GP, ext_i - g0)  # source rows in this group
        blocks = CeilDiv(gs, P)
        r0, j0 = T.Const(P) * T.Sym(ti), T.Const(P) * T.Sym(tj)
        rs, cs = Min(P, gs - r0), Min(P, ext_j - j0)
        dt_in = self.decl(src.tensor).dtype
        dt_out = self.decl(c.target.tensor).dtype
        group = self.b.nested()
        blk = group.fresh(f"{src.tensor}_t")
        group.emit(Alloc(blk, (Min(P, gs), blocks * ext_j), dt_in, Buffer.SBUF, loc=src.loc))

        def view(tensor: str, order, rows: Slice, cols: Slice) -> View:  # leading axes fixed
            span = {a_name: rows, b_name: cols}
            return View(tensor, tuple(span.get(n, At(T.Sym(n))) for n in order))

        load = group.nested()
        whole_rows = View(blk, (Slice(0, rs), Slice(ext_j * T.Sym(ti), ext_j)))
        load.emit(
            Load(
                whole_rows,
                view(src.tensor, names, Slice(g0 + r0, rs), Slice(0, ext_j)),
                loc=src.loc,
            )
        )
        group.emit(Loop(ti, 0, blocks, body=tuple(load.stmts), loc=c.loc))
        b = group.nested()
        ps = b.fresh(f"{src.tensor}_tp")
        b.emit(Alloc(ps, (cs, gs), dt_in, Buffer.PSUM, loc=c.loc))
        part = View(blk, (Slice(0, rs), Slice(ext_j * T.Sym(ti) + j0, cs)))
        turn = TensorTranspose(View(ps, (Slice(0, cs), Slice(r0, rs))), part, loc=c.loc)
        b.emit(Loop(ti, 0, blocks, body=(turn,), loc=c.loc))
        res = b.fresh(f"{c.target.tensor}_t")
        b.emit(Alloc(res, (cs, gs), dt_out, Buffer.SBUF, loc=c.loc))
        b.emit(TensorCopy(T.whole(res, cs, gs), T.whole(ps, cs, gs), loc=c.loc))
        tgt = sym_names(c.target.index)
        out = view(c.target.tensor, tgt, Slice(g0, gs), Slice(j0, cs))
        b.emit(Store(out, T.whole(res, cs, gs), loc=c.loc))
        group.emit(Loop(tj, 0, CeilDiv(ext_j, P), body=tuple(b.stmts), loc=c.loc))
        nest = Loop(tg, 0, CeilDiv(ext_i, GP), body=tuple(group.stmts), loc=c.loc)
        for ax in reversed(outer):
            nest = Loop(ax.name, 0, ax.extent, body=(nest,), loc=c.loc)
        self.b.emit(nest)


#: row blocks of 128 one transpose group stages: 4 x 128 fp32 = one 2 KiB PSUM bank per partition
TRANSPOSE_GROUP = 4


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


def guard_trips(cond) -> object | None:
    """A condition on scalar sizes as a trip count of 0 or 1 (None if it is not one)."""
    from cuda2nki.passes.guards_to_domains import _size

    if isinstance(cond, Binary) and cond.op == Op.LAND:
        a, b = guard_trips(cond.a), guard_trips(cond.b)
        return None if a is None or b is None else Min(a, b)
    if not isinstance(cond, Binary):
        return None
    a, b = _size(cond.a), _size(cond.b)
    if a is None or b is None:
        return None
    one = Const(1)
    if cond.op == Op.LT:
        return Min(one, Max(b - a, Const(0)))
    if cond.op == Op.LE:
        return Min(one, Max(b - a + one, Const(0)))
    if cond.op == Op.GT:
        return Min(one, Max(a - b, Const(0)))
    if cond.op == Op.GE:
        return Min(one, Max(a - b + one, Const(0)))
    if cond.op == Op.NE:  # |a - b| >= 1
        return Min(one, Max(a - b, b - a))
    if cond.op == Op.EQ:
        return one - Min(one, Max(a - b, b - a))
    return None


#: bytes per partition a cached transposed operand may take (with its stationary neighbour):
#: a third of the usable SBUF partition, the rest stays for the blocks being computed
CACHE_BUDGET = 64 * 1024
#: bytes per partition a staged row block of a matmul result may take (one store per row block)
STAGE_BUDGET = 16 * 1024

#: bytes per partition the two resident blocks of a blocked matmul take together: the moving
#: operand's column block (at most :data:`CACHE_BUDGET`) and the transposed stationary operand's
#: row block, which takes the rest; what is left of the usable SBUF partition holds one row block
#: of the stationary operand staged for its transposes
BLOCKS_BUDGET = 160 * 1024


def itemsize(dtype: str) -> int:
    import numpy as np

    from cuda2nki.ir.types import np_dtype

    return int(np.dtype(np_dtype(dtype)).itemsize)


def _clip_under_select(dims) -> bool:
    """Whether a read under a select is loaded clipped to its tensor: a read with a fixed index
    (``in[0, x + dx]``) only where its moving dims are shifted from the tile's own place;
    unshifted (``att[b, r, c]`` under a causal mask) it is the plain load, which the other reads
    of that tile share."""
    if all(d.axis is not None for d in dims):
        return True
    return any(d.axis is not None and (d.k != 1 or d.c != Const(0)) for d in dims)


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


# ---------------------------------------------------------------------- matmul lowering


@dataclass(frozen=True)
class _Dims:
    """Tile sizes and extents of one contraction: partitions (K tile) ``P``, row tile ``TM``,
    column tile ``TN``, contraction extent ``K`` in ``KT`` tiles, result ``M`` x ``N``."""

    P: int
    TM: int
    TN: int
    K: Any
    KT: Any
    M: Any
    N: Any
    dtype: str


@dataclass(frozen=True)
class _Term:
    """One product ``sum_k L * R`` of a matmul statement: its reduction, axis, extent and
    operands (``L`` stationary, ``R`` moving)."""

    r: Reduce
    k: str
    K: Any
    L: Read
    R: Read


@dataclass(frozen=True)
class _Block:
    """The output block of the unblocked matmul nest: tile sizes, block origin and extent,
    output axes, column extent and the operand dtype."""

    P: int
    TM: int
    TN: int
    m0: Any
    ms: Any
    n0: Any
    ns: Any
    i_ax: str | None
    j_ax: str | None
    N: Any
    dtype: str


@dataclass
class _Matmul:
    """``out[i, j] = epilogue(sum_k L(i, k) * R(k, j))`` on the tensor engine.

    L supplies the stationary operand ``[K, M]`` (transposed through PSUM when it is stored
    ``[M, K]``), R the moving operand ``[K, N]``; either may lack its output axis (GEMV, vector x
    matrix).  The contraction is tiled K=128 x M=128 x N=512 with the first K tile peeled so that
    it overwrites the fp32 PSUM accumulator and the others accumulate.  Stationary tiles of one M
    block are loaded once and reused for every N block.
    """

    lw: _Lowering
    c: Compute
    b: T.Builder = field(init=False)

    def lower(self) -> None:
        c, lw = self.c, self.lw
        self.b = lw.b
        products = contractions(c.expr)
        assert products
        r = products[0]
        a = attrs(c)
        P, TM, TN = (
            int(a.get("p_tile", "128")),
            int(a.get("m_tile", "128")),
            int(a.get("n_tile", "512")),
        )
        mm_dtype = a.get("mm_dtype", "float32")
        k = r.axes[0].name
        K = r.axes[0].extent
        body = strip_cast(r.body)
        ops = [strip_cast(body.a), strip_cast(body.b)]
        # batch axes (loops) and scalar parameters fixing a dim (``sum[r, q, p]``, one slice
        # per launch) both index the operands at one position
        fixed = tuple(n for n in a.get("fixed", "").split(",") if n)
        self.outer = tuple(a.name for a in _outer(c)) + fixed
        axes = tuple(n for n in c.domain.names if n not in self.outer)
        i_ax = axes[0] if len(axes) == 2 or _has_axis(ops, axes[0], first=True) else None
        j_ax = axes[1] if len(axes) == 2 else (None if i_ax else axes[0])
        L, R = self._split(ops, k, i_ax, j_ax)
        M = _axis(c, i_ax).extent if i_ax else Const(1)
        N = _axis(c, j_ax).extent if j_ax else Const(1)
        terms = [_Term(r, k, K, L, R)] + [self._term(x, i_ax, j_ax) for x in products[1:]]
        if any(_needs_transpose(t.R, t.k, self.outer) for t in terms):
            TN = min(TN, P)
        if len(terms) == 1 and i_ax and j_ax and not _needs_transpose(R, k, self.outer):
            dims = _Dims(P, TM, TN, K, CeilDiv(K, P), M, N, mm_dtype)
            nest = self._blocked(r, L, R, k, i_ax, j_ax, dims)
            if _needs_transpose(L, k, self.outer):  # row blocks outermost: R hoisted when narrow
                once = uniform.size_is(CeilDiv(N, self._column_block(dims)), 1, c.loc)
                hoisted = self._blocked(r, L, R, k, i_ax, j_ax, dims, hoist=True)
                nest = uniform.choose(once, tuple(hoisted), tuple(nest), c.loc)
            for ax in reversed(_outer(c)):  # batch axes: one matrix product per batch element
                nest = [Loop(ax.name, 0, ax.extent, body=tuple(nest), loc=c.loc)]
            self.b.stmts.extend(nest)
            return
        tm, tn = self.b.fresh("t"), self.b.fresh("u")
        m0 = T.Const(TM) * T.Sym(tm) if i_ax else Const(0)
        ms = Min(TM, M - m0) if i_ax else Const(1)
        n0 = T.Const(TN) * T.Sym(tn) if j_ax else Const(0)
        ns = Min(TN, N - n0) if j_ax else Const(1)
        pre: list = []
        mblock = self.b.nested()
        nblock = mblock.nested()
        accs: dict = {}
        blk = _Block(P, TM, TN, m0, ms, n0, ns, i_ax, j_ax, N, mm_dtype)
        for n, t in enumerate(terms):  # one PSUM accumulator per product, summed by the epilogue
            acc_v = self._product(t, blk, pre, mblock, nblock, share=len(terms))
            if n:  # an engine op reads at most one PSUM operand: the others move to SBUF
                sb = nblock.fresh("acc_s")
                nblock.emit(Alloc(sb, (ms, ns), "float32", Buffer.SBUF, loc=c.loc))
                nblock.emit(TensorCopy(T.whole(sb, ms, ns), acc_v, loc=c.loc))
                acc_v = T.whole(sb, ms, ns)
            accs[t.r] = acc_v
        stage = self._row_stage(mblock, ms, N) if i_ax and j_ax else None
        stage_v = None if stage is None else View(stage, (Slice(0, ms), Slice(n0, ns)))
        self._epilogue(nblock, r, accs[r], ms, ns, m0, n0, i_ax, j_ax, stage_v, others=accs)
        nloop = Loop(tn, 0, CeilDiv(N, TN), body=tuple(nblock.stmts), loc=c.loc) if j_ax else None
        mstmts = mblock.stmts + ([nloop] if nloop else nblock.stmts)
        if stage is not None:  # the row block's result, staged across its column blocks
            whole = self._target_view({i_ax: Slice(m0, ms), j_ax: Slice(0, N)})
            mstmts.append(Store(whole, T.whole(stage, ms, N), loc=c.loc))
        nest = [Loop(tm, 0, CeilDiv(M, TM), body=tuple(mstmts), loc=c.loc)] if i_ax else mstmts
        nest = pre + nest
        for ax in reversed(_outer(c)):  # batch axes: one matrix product per batch element
            nest = [Loop(ax.name, 0, ax.extent, body=tuple(nest), loc=c.loc)]
        self.b.stmts.extend(nest)

    def _term(self, r: Reduce, i_ax, j_ax) -> _Term:
        """A further product of the statement, its operands in stationary/moving order."""
        body = strip_cast(r.body)
        k = r.axes[0].name
        L, R = self._split([strip_cast(body.a), strip_cast(body.b)], k, i_ax, j_ax)
        return _Term(r, k, r.axes[0].extent, L, R)

    def _product(
        self, t: _Term, d: _Block, pre: list, mblock: T.Builder, nblock: T.Builder, share: int
    ) -> View:
        """One product on the output block: its stationary operand loaded per row block (into
        ``mblock``), its PSUM accumulator filled per column block (into ``nblock``)."""
        P, K, k = d.P, t.K, t.k
        KT = CeilDiv(K, P)
        cached = None
        if d.i_ax and d.j_ax and _needs_transpose(t.R, k, self.outer):
            cached = self._cache_transposed(
                pre, t.R, k, K, KT, P, d.TN, d.TM, d.j_ax, d.N, d.dtype, share=share
            )
        L, R = t.L, t.R
        st = mblock.fresh(f"{L.tensor}_T")
        mblock.emit(Alloc(st, (Const(P), KT, d.ms), d.dtype, Buffer.SBUF, loc=L.loc))
        if _needs_transpose(L, k, self.outer):  # the row block's rows, wide DMAs
            self._wide_rows(mblock, L, k, K, d.i_ax, (d.m0, d.ms), st, Const(0), d.dtype)
        else:
            kv = mblock.fresh("k")
            kb = mblock.nested()
            k0 = T.Const(P) * T.Sym(kv)
            ks = Min(P, K - k0)
            dst = View(st, (Slice(0, ks), At(T.Sym(kv)), Slice(0, d.ms)))
            self._operand(kb, L, k, k0, ks, d.i_ax, d.m0, d.ms, dst, d.dtype)
            mblock.emit(Loop(kv, 0, KT, body=tuple(kb.stmts), loc=L.loc))
        acc = nblock.fresh("acc")
        nblock.emit(Alloc(acc, (d.ms, d.ns), "float32", Buffer.PSUM, loc=self.c.loc))
        acc_v = T.whole(acc, d.ms, d.ns)
        for first in (True, False):
            kb2 = nblock.nested()
            kv2 = None if first else nblock.fresh("k")
            kk = Const(0) if first else T.Sym(kv2)
            k0 = T.Const(P) * kk if not first else Const(0)
            ks = Min(P, K - k0) if not first else Min(P, K)
            if cached is not None:  # R transposed once, before the row-block loop
                mv_v = View(cached, (Slice(0, ks), At(kk), Slice(d.n0, d.ns)))
            else:
                mv = kb2.fresh(f"{R.tensor}_t")
                kb2.emit(Alloc(mv, (ks, d.ns), d.dtype, Buffer.SBUF, loc=R.loc))
                mv_v = T.whole(mv, ks, d.ns)
                self._operand(kb2, R, k, k0, ks, d.j_ax, d.n0, d.ns, mv_v, d.dtype)
            st_v = View(st, (Slice(0, ks), At(kk), Slice(0, d.ms)))
            kb2.emit(Matmul(acc_v, st_v, mv_v, accumulate=not first, loc=self.c.loc))
            if first:
                nblock.stmts.extend(kb2.stmts)
            else:
                nblock.emit(
                    Loop(
                        kv2, 1, KT, kind=LoopKind.SEQUENTIAL, body=tuple(kb2.stmts), loc=self.c.loc
                    )
                )
        return acc_v

    def _column_block(self, d: _Dims) -> SizeExpr:
        """``NB``: the columns of the moving operand resident at once, TN-wide chunks that fit
        :data:`CACHE_BUDGET` (per column, KT elements of R and one staged result)."""
        size, out_size = itemsize(d.dtype), itemsize(self.lw.decl(self.c.target.tensor).dtype)
        fit = FloorDiv(Const(CACHE_BUDGET // d.TN), d.KT * size + out_size)
        return Min(T.Const(d.TN) * CeilDiv(d.N, d.TN), T.Const(d.TN) * Max(Const(1), fit))

    def _blocked(
        self,
        r: Reduce,
        L: Read,
        R: Read,
        k: str,
        i_ax: str,
        j_ax: str,
        d: _Dims,
        hoist: bool = False,
    ):
        """The contraction blocked for reuse (the loop order of the documented matmul
        optimisations): a block of ``NB`` columns of the moving operand, all of K, stays in SBUF
        (as wide as :data:`CACHE_BUDGET` allows at the kernel's K together with the staged result
        block, loaded by one DMA per K tile) while every row block of the result streams past
        it; the result rows of a column block are staged in SBUF and stored by one DMA.

        A stationary operand stored ``[M, K]`` is transposed once, a block of ``MB`` rows at a
        time (all of M when it fits :data:`BLOCKS_BUDGET` beside the moving block), before the column blocks that
        use it, so large K costs neither a transpose per column block nor an SBUF overflow;
        stored ``[K, M]`` it is loaded per row block.

        ``for w < ceil(M / MB): build L^T[w-block]; for v < ceil(N / NB): load R[:, v-block];
        for t < ceil(mb / TM): for u < ceil(nb / TN): acc = sum_k L^T[k, t] @ R[k, u];
        stage[:, u] = epilogue(acc); store stage``.

        ``hoist`` (with ``L`` stored ``[M, K]``, for ``N`` within one column block): the single
        block of R is loaded once, before the loop over row blocks of L^T, not once per row
        block."""
        c, b, P, TM, TN, K, KT = self.c, self.b, d.P, d.TM, d.TN, d.K, d.KT
        size = itemsize(d.dtype)
        NB = self._column_block(d)
        cached = _needs_transpose(L, k, self.outer)
        hoist = hoist and cached
        outer = b.nested() if cached else b
        if cached:  # rows of L^T resident at once: KT elements per partition for each row
            rows = FloorDiv(Const(BLOCKS_BUDGET), KT * size) - Min(NB, d.N)
            MB = Min(
                T.Const(TM) * CeilDiv(d.M, TM), T.Const(TM) * Max(Const(1), FloorDiv(rows, TM))
            )
            w = outer.fresh("w")
            w0 = MB * T.Sym(w)
            m_ext = Min(MB, d.M - w0)
        else:
            w0, m_ext = Const(0), d.M
        v = None if hoist else outer.fresh("v")
        tm = outer.fresh("t")
        nb0 = Const(0) if hoist else NB * T.Sym(v)
        nb = Min(NB, d.N) if hoist else Min(NB, d.N - nb0)
        local = T.Const(TM) * T.Sym(tm)
        m0 = w0 + local if cached else local
        ms = Min(TM, m_ext - local)
        vblock = outer.nested()
        rblock = b.nested() if hoist else vblock  # R's block: before the row blocks, or per v
        rb = rblock.fresh(f"{R.tensor}_b")
        rblock.emit(Alloc(rb, (Const(P), KT, nb), d.dtype, Buffer.SBUF, loc=R.loc))
        kv = rblock.fresh("k")
        kb = rblock.nested()
        k0 = T.Const(P) * T.Sym(kv)
        ks = Min(P, K - k0)
        dst = View(rb, (Slice(0, ks), At(T.Sym(kv)), Slice(0, nb)))
        self._operand(kb, R, k, k0, ks, j_ax, nb0, nb, dst, d.dtype)
        rblock.emit(Loop(kv, 0, KT, body=tuple(kb.stmts), loc=R.loc))
        mblock = vblock.nested()
        pre: list = []
        if cached:
            st = self._cache_stationary(pre, outer, L, k, i_ax, d, w0, m_ext)
            st_m = Slice(local, ms)
        else:
            st, st_m = self._stationary(mblock, L, k, i_ax, m0, ms, d), Slice(0, ms)
        out = self.lw.decl(c.target.tensor)
        stage = mblock.fresh(f"{c.target.tensor}_t")
        mblock.emit(Alloc(stage, (ms, nb), out.dtype, Buffer.SBUF, loc=c.loc))
        un = mblock.fresh("u")
        ublock = mblock.nested()
        u0 = T.Const(TN) * T.Sym(un)
        ns = Min(TN, nb - u0)
        acc = ublock.fresh("acc")
        ublock.emit(Alloc(acc, (ms, ns), "float32", Buffer.PSUM, loc=c.loc))
        acc_v = T.whole(acc, ms, ns)
        for first in (True, False):
            kb2 = ublock.nested()
            kv2 = None if first else ublock.fresh("k")
            kk = Const(0) if first else T.Sym(kv2)
            ks2 = Min(P, K) if first else Min(P, K - T.Const(P) * kk)
            mv_v = View(rb, (Slice(0, ks2), At(kk), Slice(u0, ns)))
            st_v = View(st, (Slice(0, ks2), At(kk), st_m))
            kb2.emit(Matmul(acc_v, st_v, mv_v, accumulate=not first, loc=c.loc))
            if first:
                ublock.stmts.extend(kb2.stmts)
            else:
                ublock.emit(
                    Loop(kv2, 1, KT, kind=LoopKind.SEQUENTIAL, body=tuple(kb2.stmts), loc=c.loc)
                )
        staged = View(stage, (Slice(0, ms), Slice(u0, ns)))
        self._epilogue(ublock, r, acc_v, ms, ns, m0, nb0 + u0, i_ax, j_ax, stage=staged)
        mblock.emit(Loop(un, 0, CeilDiv(nb, TN), body=tuple(ublock.stmts), loc=c.loc))
        place = {i_ax: Slice(m0, ms), j_ax: Slice(nb0, nb)}
        mblock.emit(Store(self._target_view(place), T.whole(stage, ms, nb), loc=c.loc))
        vblock.emit(Loop(tm, 0, CeilDiv(m_ext, TM), body=tuple(mblock.stmts), loc=c.loc))
        if hoist:
            body = (*outer.stmts, *pre, *vblock.stmts)
            return [*rblock.stmts, Loop(w, 0, CeilDiv(d.M, MB), body=body, loc=c.loc)]
        vloop = Loop(v, 0, CeilDiv(d.N, NB), body=tuple(vblock.stmts), loc=c.loc)
        if not cached:
            return [vloop]
        body = (*outer.stmts, *pre, vloop)
        return [Loop(w, 0, CeilDiv(d.M, MB), body=body, loc=c.loc)]

    def _binding_env(self) -> dict:
        """Sizes at the binding's values: its scalars and its tensor shapes."""
        return F.binding_env(self.lw)

    def _cache_stationary(
        self, pre: list, b: T.Builder, L: Read, k: str, i_ax: str, d: _Dims, w0, wn
    ) -> str:
        """``L`` stored ``[M, K]`` is transposed per row block; inside the loop over column
        blocks of the moving operand that would redo every transpose once per column block, so
        the ``wn`` rows from ``w0`` are transposed once into a ``[128, KT, wn]`` tile before that
        loop (``wn`` is sized by :data:`BLOCKS_BUDGET`)."""
        name = b.fresh(f"{L.tensor}_T")
        pre.append(Alloc(name, (Const(d.P), d.KT, wn), d.dtype, Buffer.SBUF, loc=L.loc))
        tb = b.nested()
        tm = tb.fresh("t")
        local = T.Const(d.TM) * T.Sym(tm)
        ms = Min(d.TM, wn - local)
        body = tb.nested()
        self._stationary(body, L, k, i_ax, w0 + local, ms, d, into=(name, local))
        pre.append(Loop(tm, 0, CeilDiv(wn, d.TM), body=tuple(body.stmts), loc=L.loc))
        return name

    def _stationary(
        self, b: T.Builder, L: Read, k: str, i_ax: str, m0, ms, d: _Dims, into=None
    ) -> str:
        """``L``'s row block as the stationary operand ``[P, KT, ms]``: stored ``[M, K]``, the
        block's rows are loaded by one DMA and transposed 128 columns at a time.  ``into``:
        ``(tile, column)`` of a larger tile to fill instead of a fresh one."""
        P, K, KT = d.P, d.K, d.KT
        if into is None:
            st, c0 = b.fresh(f"{L.tensor}_T"), Const(0)
            b.emit(Alloc(st, (Const(P), KT, ms), d.dtype, Buffer.SBUF, loc=L.loc))
        else:
            st, c0 = into
        kv = b.fresh("k")
        k0 = T.Const(P) * T.Sym(kv)
        ks = Min(P, K - k0)
        kb = b.nested()
        st_k = View(st, (Slice(0, ks), At(T.Sym(kv)), Slice(c0, ms)))
        if not _needs_transpose(L, k, self.outer):
            self._operand(kb, L, k, k0, ks, i_ax, m0, ms, st_k, d.dtype)
            b.emit(Loop(kv, 0, KT, body=tuple(kb.stmts), loc=L.loc))
            return st
        rows = b.fresh(f"{L.tensor}_rows")
        b.emit(Alloc(rows, (ms, K), d.dtype, Buffer.SBUF, loc=L.loc))
        self._operand_rows(b, L, k, i_ax, m0, ms, K, T.whole(rows, ms, K))
        tp = kb.fresh(f"{L.tensor}_tp")
        kb.emit(Alloc(tp, (ks, ms), d.dtype, Buffer.PSUM, loc=L.loc))
        src = View(rows, (Slice(0, ms), Slice(k0, ks)))
        kb.emit(TensorTranspose(T.whole(tp, ks, ms), src, loc=L.loc))
        kb.emit(TensorCopy(st_k, T.whole(tp, ks, ms), loc=L.loc))
        b.emit(Loop(kv, 0, KT, body=tuple(kb.stmts), loc=L.loc))
        self.lw.ctx.note(
            "C2N2506",
            L.loc,
            tensor=L.tensor,
            how="tensor-engine transpose through PSUM, once per row block"
            + (" and column block" if into is None else ", before the column blocks"),
        )
        return st

    def _operand_rows(self, b: T.Builder, o: Read, k: str, ax: str, x0, xs, K, dst: View) -> None:
        all_names = sym_names(o.index) or ()
        sel = {k: Slice(0, K), ax: Slice(x0, xs)}
        dims = tuple(At(T.Sym(n)) if n in self.outer else sel[n] for n in all_names)
        b.emit(Load(dst, View(o.tensor, dims), loc=o.loc))

    def _target_view(self, place: dict) -> View:
        dims = tuple(
            At(ix) if not (isinstance(ix, T.Sym) and ix.name in place) else place[ix.name]
            for ix in self.c.target.index
        )
        return View(self.c.target.tensor, dims)

    def _cache_transposed(
        self, pre, R, k, K, KT, P, TN, TM, j_ax, N, dtype, share: int = 1
    ) -> str | None:
        """``R`` stored [N, K] must be transposed to [K, N] for the moving operand.  Transposing
        it per (row block, column block) would redo the same work for every 128-row block of
        the result, so, when ``KT x N`` elements per partition fit in a share of SBUF at the
        binding's sizes, transpose it once into a [128, KT, N] tile before the row-block loop.
        ``share``: how many products of the statement cache theirs beside it."""
        size = itemsize(dtype)
        # cached R^T + the stationary block beside it, for each product of the statement
        per_part = (KT * N + KT * TM) * size * share
        env = self._binding_env()
        try:
            need = int(per_part.evaluate(env))
        except Exception:  # sizes unknown without a binding
            need = None
        if need is None or need > CACHE_BUDGET:
            why = (
                "sizes unknown without a binding"
                if need is None
                else f"{need} bytes per partition, above the {CACHE_BUDGET} budget"
            )
            self.lw.ctx.note(
                "C2N2506",
                R.loc,
                tensor=R.tensor,
                how="tensor-engine transpose through PSUM, repeated for every row block of the "
                f"result: caching it transposed was not possible ({why})",
            )
            return None
        b = self.b.nested()
        name = b.fresh(f"{R.tensor}_T")
        b.emit(Alloc(name, (Const(P), KT, N), dtype, Buffer.SBUF, loc=R.loc))
        un = b.fresh("u")
        n0 = T.Const(TN) * T.Sym(un)
        ns = Min(TN, N - n0)
        ub = b.nested()
        self._wide_rows(ub, R, k, K, j_ax, (n0, ns), name, n0, dtype, once=need)
        b.emit(Loop(un, 0, CeilDiv(N, TN), body=tuple(ub.stmts), loc=R.loc))
        pre.extend(b.stmts)
        return name

    def _row_stage(self, b: T.Builder, ms, N) -> str | None:
        """A ``[ms, N]`` tile staging a row block of the result for one store, when the
        binding's ``N`` columns fit :data:`STAGE_BUDGET`; None otherwise."""
        out = self.lw.decl(self.c.target.tensor)
        try:
            need = int(N.evaluate(self._binding_env())) * itemsize(out.dtype)
        except Exception:  # sizes unknown without a binding
            return None
        if need > STAGE_BUDGET:
            return None
        name = b.fresh(f"{self.c.target.tensor}_rows")
        b.emit(Alloc(name, (ms, N), out.dtype, Buffer.SBUF, loc=self.c.loc))
        return name

    def _wide_rows(
        self, b, o: Read, k: str, K, ax, block, tile: str, col0, dtype: str, once=None
    ) -> None:
        """``tile[:, k tile, col0 : col0 + xs]`` = ``o``'s rows of ``block`` transposed, the
        rows loaded in wide DMAs (see _wide_rows)."""
        xs = block[1]

        def dst(kt, ks) -> View:
            return View(tile, (Slice(0, ks), At(kt), Slice(col0, xs)))

        transposed_rows(b, o, self.outer, (k, ax), K, block, dst, dtype)
        how = "tensor-engine transpose through PSUM, from rows loaded up to "
        how += f"{ROW_CHUNK} columns per DMA"
        if once is not None:
            how += (
                ", once per block before the row-block loop, kept in SBUF: "
                f"{once} bytes per partition at the binding's sizes"
            )
        self.lw.ctx.note("C2N2506", o.loc, tensor=o.tensor, how=how)

    def _split(self, ops: list[Read], k: str, i_ax, j_ax) -> tuple[Read, Read]:
        def has(o: Read, ax) -> bool:
            return ax is not None and ax in (sym_names(o.index) or ())

        a, b = ops
        if has(a, j_ax) or has(b, i_ax):
            a, b = b, a
        for o, ax in ((a, i_ax), (b, j_ax)):
            names = tuple(n for n in (sym_names(o.index) or ()) if n not in self.outer)
            want = {k, ax} - {None}
            if set(names) != want or len(names) != len(want):
                raise T.Unsupported(
                    f"the contraction operand access {o.tensor}{list(names)}", o.loc
                )
        return a, b

    def _operand(
        self,
        b: T.Builder,
        o: Read,
        k: str,
        k0,
        ks,
        ax,
        x0,
        xs,
        dst: View,
        dtype: str,
        once: int | None = None,
    ) -> None:
        """Fill ``dst`` ([ks, xs], contraction on partitions) from operand ``o``."""
        all_names = sym_names(o.index) or ()
        names = tuple(n for n in all_names if n not in self.outer)

        def view(sel: dict) -> View:
            return View(
                o.tensor, tuple(At(T.Sym(n)) if n in self.outer else sel[n] for n in all_names)
            )

        sel = {k: Slice(k0, ks)}
        if ax is not None:
            sel[ax] = Slice(x0, xs)
        if len(names) == 1 or names[0] == k:
            b.emit(Load(dst, view(sel), loc=o.loc))
            return
        raw = b.fresh(f"{o.tensor}_t")
        b.emit(Alloc(raw, (xs, ks), dtype, Buffer.SBUF, loc=o.loc))
        b.emit(Load(T.whole(raw, xs, ks), view(sel), loc=o.loc))
        tp = b.fresh(f"{o.tensor}_tp")
        b.emit(Alloc(tp, (ks, xs), dtype, Buffer.PSUM, loc=o.loc))
        b.emit(TensorTranspose(T.whole(tp, ks, xs), T.whole(raw, xs, ks), loc=o.loc))
        b.emit(TensorCopy(dst, T.whole(tp, ks, xs), loc=o.loc))
        how = "tensor-engine transpose through PSUM"
        if once is not None:
            how += (
                ", once per block before the row-block loop, kept in SBUF: "
                f"{once} bytes per partition at the binding's sizes"
            )
        self.lw.ctx.note("C2N2506", o.loc, tensor=o.tensor, how=how)

    def _epilogue(
        self,
        b: T.Builder,
        r: Reduce,
        acc_v: View,
        ms,
        ns,
        m0,
        n0,
        i_ax,
        j_ax,
        stage: View | None = None,
        others: dict | None = None,
    ) -> None:
        """The output block ``[m0 + ms, n0 + ns]`` from the accumulator: stored, or written
        into ``stage`` (a block of the result stored later by one DMA)."""
        c = self.c
        out = self.lw.decl(c.target.tensor)

        p_name, f_name = i_ax or "", j_ax or ""

        def reader(rd: Read) -> T.Val:
            """Epilogue operands on the output block (``beta * C[i, j]``, a bias ``b[j]``)."""
            got = access_class(rd.index, p_name, f_name) if p_name and f_name else None
            if (
                got is None
                or got[0] not in (FULL, ROW, BCAST, SCALAR)
                or self.lw.is_temp(rd.tensor)
            ):
                raise T.Unsupported(f"a matmul epilogue reading '{rd.tensor}'", rd.loc)
            cls, dims = got
            view = dims_for(dims, p_name, f_name, m0, ms, n0, ns)
            dt = self.lw.decl(rd.tensor).dtype
            if cls == FULL:
                return self.lw._load(b, rd, (ms, ns), view, T.FULL, dt)
            if cls == BCAST:
                return self.lw._load(b, rd, (ms, ns), view, T.FULL, dt)
            return self.lw._load(b, rd, (ms, Const(1)), view, T.ROW, dt)

        comp = _EpilogueCompiler(b, ms, ns, reader, self.lw.params, self.lw.ctx.diagnostics, c.loc)
        comp.result = r
        comp.acc = acc_v
        comp.others = others
        # index values on the output block (a causal mask ``k <= j``): iota tiles
        comp.index_map = {a: m for a, m in ((i_ax, (1, 0, m0)), (j_ax, (0, 1, n0))) if a}
        comp.full = (_cap(ms), _cap(ns))
        comp.loop_syms = frozenset(m0.free_syms() | n0.free_syms()) | {a.name for a in _outer(c)}
        expr = c.expr
        if stage is not None and isinstance(expr, Cast) and expr.dtype == out.dtype:
            expr = expr.x  # the copy into the staged block converts
        val = comp.compile(expr)
        if stage is not None:
            b.emit(TensorCopy(stage, val.operand, loc=c.loc))
            return
        if val.operand is acc_v or val.kind != T.FULL:
            res = b.fresh(f"{c.target.tensor}_t")
            b.emit(Alloc(res, (ms, ns), out.dtype, Buffer.SBUF, loc=c.loc))
            b.emit(
                TensorCopy(
                    T.whole(res, ms, ns), acc_v if val.operand is acc_v else val.operand, loc=c.loc
                )
            )
            src = T.whole(res, ms, ns)
        else:
            src = val.operand
        place = {i_ax: Slice(m0, ms), j_ax: Slice(n0, ns)}
        dims = tuple(
            At(ix) if not (isinstance(ix, T.Sym) and ix.name in place) else place[ix.name]
            for ix in c.target.index
        )
        b.emit(Store(View(c.target.tensor, dims), src, loc=c.loc))


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


@dataclass(frozen=True)
class _Acc:
    view: View
    rows: object
    cols: object


def _no_reads(rd: Read) -> T.Val:
    raise T.Unsupported(f"an epilogue reading '{rd.tensor}' after a reduction", rd.loc)


def _has_axis(ops: list[Read], ax: str, first: bool) -> bool:
    return any(ax in (sym_names(o.index) or ()) for o in ops)


def _needs_transpose(o: Read, k: str, outer: tuple = ()) -> bool:
    names = tuple(n for n in (sym_names(o.index) or ()) if n not in outer)
    return len(names) == 2 and names[0] != k


_ = SourceLoc


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
