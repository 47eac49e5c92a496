"""The tile of a clamped read on the rows layout (see :mod:`cuda2nki.passes._clamp`).

A read ``x[max(i - 1, 0), min(j + 1, C - 1)]`` on the row tile ``[r0, r0 + rows) x [c0, c0 +
cols)`` is the shifted tile ``x[r0 - 1 : .., c0 + 1 : ..]`` with the positions outside the
clamp bounds replaced by the edge element.  One DMA moves the positions inside the bounds; the
edge rows (a partition-axis clamp: the first or last row tile) are the edge row broadcast over
the partitions they fill, one DMA each; the edge columns (a free-axis clamp: the first or last
column chunk) are the tile's own edge column broadcast along the free dim on the engines -- unless no column of
the chunk is inside the bounds (an extent narrower than the tap's offset), when the edge
column comes from HBM.  Every edge piece runs behind a 0/1-trip loop, so the sizes stay
symbolic.  Not a pass.
"""

from __future__ import annotations

from cuda2nki.ir.nodes import (
    Alloc,
    At,
    Const,
    Lit,
    Load,
    Loop,
    Max,
    Memset,
    Min,
    Read,
    Reduce,
    SizeExpr,
    Slice,
    Sym,
    TensorScalar,
    View,
)
from cuda2nki.ir.ops import Buffer, Op
from cuda2nki.passes import _tiles as T
from cuda2nki.passes._analysis import reads, walk
from cuda2nki.passes._clamp import Clamped, unclamp
from cuda2nki.passes._index import BCAST, FULL, ROW, access_class, affine1, dims_for
from cuda2nki.passes.fold_sizes import fold_size


def clamped_tile(
    b: T.Builder, rd: Read, p_axis: str, f_axis: str, box: tuple, dtype: str
) -> T.Val | None:
    """The tile of ``rd`` (an index of it clamped) on the row tile ``box`` = ``(r0, rows, c0,
    cols)``; None where its unclamped access is not a tile, a row or a broadcast row."""
    got = _access(rd, p_axis, f_axis, box)
    if got is None:
        return None
    cls, view, clamps = got
    shape = (box[1], Const(1) if cls == ROW else box[3])
    name = _build(b, rd, cls, view, clamps, shape, dtype)
    return T.Val(T.ROW if cls == ROW else T.FULL, T.whole(name, *shape), dtype)


class HaloTaps:
    """Reads of one tensor along the free axis that differ only in a constant offset, some of
    them clamped (``x[i, max(j - 1, 0)]``, ``x[i, j]``, ``x[i, min(j + 1, C - 1)]``): one tile
    of the chunk widened by the halo, loaded once with its clamped edges, serves them all --
    each tap is the tile shifted by its offset."""

    def __init__(self, expr, p_axis: str, f_axis: str, extents: dict) -> None:
        self.p_axis, self.f_axis = p_axis, f_axis
        self.axes = frozenset(a for a in (p_axis, f_axis) if a)
        self.extents = extents
        self.groups: dict = {}  # (tensor, leading dims) -> ([offsets], lo, hi) or None
        self.tiles: dict = {}  # (tensor, leading dims) -> (tile name, lowest offset)
        self.reads = [] if any(isinstance(x, Reduce) for x in walk(expr)) else reads(expr)

    def read(self, b: T.Builder, rd: Read, box: tuple, dtype: str) -> T.Val | None:
        """The tap ``rd`` as a view of its group's halo tile; None if it is in no group."""
        if not self.f_axis or not rd.index:
            return None
        tap = self._tap(rd)
        if tap is None:
            return None
        key, offset, _, _ = tap
        group = self._group(key)
        if group is None or offset not in group[0]:
            return None
        offsets, lo, hi = group
        low = min(offsets)
        r0, rows, c0, cols = box
        if key not in self.tiles:
            wide = fold_size(cols + Const(max(offsets) - low))
            edge = Clamped(Sym(self.f_axis) + Const(low), lo, hi)
            head = Read(rd.tensor, (*rd.index[:-1], _clamp_expr(edge)), loc=rd.loc)
            got = _access(head, self.p_axis, self.f_axis, (r0, rows, c0, wide))
            if got is None or got[0] != FULL:
                self.groups[key] = None
                return None
            cls, view, clamps = got
            name = _build(b, head, cls, view, clamps, (rows, wide), dtype, base="_h")
            self.tiles[key] = (name, low)
        name, low = self.tiles[key]
        cols_view = Slice(Const(offset - low), cols)
        return T.Val(T.FULL, View(name, (Slice(Const(0), rows), cols_view)), dtype)

    def _tap(self, rd: Read):
        """(group key, offset, lo, hi) of a read whose last index is ``f + offset`` (clamped or
        not) and whose other indices do not move along the free axis."""
        last = unclamp(rd.index[-1], self.axes)
        at = affine1(last.inner, self.axes)
        if at is None or at.axis != self.f_axis or at.k != 1 or not isinstance(at.c, Const):
            return None
        if any(self.f_axis in ix.free_syms() for ix in rd.index[:-1]):
            return None
        return (rd.tensor, rd.index[:-1]), at.c.value, last.lo, last.hi

    def _group(self, key):
        if key in self.groups:
            return self.groups[key]
        taps = [t for t in map(self._tap, (r for r in self.reads if r.tensor == key[0])) if t]
        taps = [t for t in taps if t[0] == key]
        extent = self.extents.get(self.f_axis)  # None: a reduction's axis, not the domain's
        self.groups[key] = _joined(taps, extent) if extent is not None else None
        return self.groups[key]


def _joined(taps: list, extent: SizeExpr):
    """The offsets of ``taps`` and the clamp bounds one halo tile needs to serve them all, or
    None (no tap clamped, bounds that differ, or an unclamped tap that leaves the bounds)."""
    if len({t[1] for t in taps}) < 2 or all(t[2] is None and t[3] is None for t in taps):
        return None
    los = {t[2] for t in taps if t[2] is not None}
    his = {t[3] for t in taps if t[3] is not None}
    if len(los) > 1 or len(his) > 1:
        return None
    lo, hi = next(iter(los), None), next(iter(his), None)
    for _, off, tlo, thi in taps:
        # a tap without a bound must stay inside it on every point of the axis [0, extent)
        if tlo is None and lo is not None and not _nonneg(Const(off) - lo):
            return None
        if thi is None and hi is not None and not _nonneg(hi - (extent - Const(1) + Const(off))):
            return None
    return sorted({t[1] for t in taps}), lo, hi


def _nonneg(e: SizeExpr) -> bool:
    v = fold_size(e)
    return isinstance(v, Const) and v.value >= 0


def _clamp_expr(c: Clamped) -> SizeExpr:
    e = c.inner
    if c.lo is not None:
        e = Max(e, c.lo)
    if c.hi is not None:
        e = Min(e, c.hi)
    return e


def _access(rd: Read, p_axis: str, f_axis: str, box: tuple):
    """(access class, view on the tile ``box``, clamps per dim) of a clamped read, or None."""
    axes = frozenset(a for a in (p_axis, f_axis) if a)
    clamps = [unclamp(ix, axes) for ix in rd.index]
    got = access_class(tuple(c.inner for c in clamps), p_axis, f_axis)
    if got is None or got[0] not in (FULL, ROW, BCAST):
        return None
    cls, dims = got
    view = dims_for(dims, p_axis, f_axis, *box)
    if any(isinstance(d, Slice) and d.step != 1 for d in view):
        return None
    if any(isinstance(v, At) and (c.lo, c.hi) != (None, None) for v, c in zip(view, clamps)):
        return None  # a fixed index clamped: not a neighbour of the tile
    return cls, view, clamps


def _build(b, rd: Read, cls, view, clamps, shape, dtype: str, base: str = "_c") -> str:
    """Load the tile of a clamped read: the positions inside the bounds, then the edges."""
    name = b.fresh(f"{rd.tensor}{base}")
    b.emit(Alloc(name, shape, dtype, Buffer.SBUF, loc=rd.loc))
    # the tile dim of each sliced view dim (a broadcast row's only slice is the free dim)
    slots = [n for n, d in enumerate(view) if isinstance(d, Slice)]
    tile_dim = {n: k + (1 if cls == BCAST else 0) for k, n in enumerate(slots)}
    inside: dict[int, tuple[SizeExpr, SizeExpr]] = {}
    for n in slots:
        inside[n] = _inside(view[n], clamps[n])
    _main(b, rd, name, shape, view, tile_dim, inside, clamps)
    for n in slots:
        c = clamps[n]
        if c.lo is None and c.hi is None:
            continue
        if tile_dim[n] == 0:
            _edge_rows(b, rd, name, shape, view, tile_dim, inside, n, c)
        else:
            _edge_cols(b, rd, name, shape, view, tile_dim, inside, n, c, dtype)
    return name


def _fill_op(dtype: str) -> Op:
    """Adding to zeros copies a float exactly; an integer (past 2**24) only through its bits."""
    return Op.BITOR if dtype.startswith(("int", "uint")) else Op.ADD


def _inside(d: Slice, c: Clamped) -> tuple[SizeExpr, SizeExpr]:
    """The tile positions ``[lo, hi)`` of ``d`` whose index is inside the clamp bounds."""
    lo: SizeExpr = Const(0)
    hi: SizeExpr = d.size
    if c.lo is not None:
        lo = fold_size(Min(d.size, Max(Const(0), c.lo - d.start)))
    if c.hi is not None:
        hi = fold_size(Min(d.size, Max(lo, c.hi + Const(1) - d.start)))
    return lo, hi


def _views(name, shape, view, tile_dim, inside, pinned: dict) -> tuple[View, list]:
    """The tile view and HBM dims of the positions inside the bounds, with ``pinned`` (view dim
    -> (tile slice, HBM index)) overriding."""
    dst = [Slice(Const(0), s) for s in shape]
    src = list(view)
    for n, (lo, hi) in inside.items():
        if n in pinned:
            dst[tile_dim[n]], src[n] = pinned[n]
            continue
        dst[tile_dim[n]] = Slice(lo, fold_size(hi - lo))
        src[n] = Slice(fold_size(view[n].start + lo), fold_size(hi - lo))
    return View(name, tuple(dst)), src


def _main(b, rd, name, shape, view, tile_dim, inside, clamps) -> None:
    """One DMA of the positions inside the bounds (none where a clamped dim has no such
    position)."""
    dst, src = _views(name, shape, view, tile_dim, inside, {})
    load = Load(dst, View(rd.tensor, tuple(src)), loc=rd.loc)
    trips: SizeExpr = Const(1)
    for n, (lo, hi) in inside.items():
        if clamps[n].lo is not None or clamps[n].hi is not None:
            trips = Min(trips, hi - lo)
    b.emit(Loop(b.fresh("g"), 0, fold_size(trips), body=(load,), loc=rd.loc))


def _edge_rows(b, rd, name, shape, view, tile_dim, inside, n: int, c: Clamped) -> None:
    """Rows of the tile outside the bounds: the edge row, broadcast over them."""
    lo, hi = inside[n]
    size = view[n].size
    for bound, first, count in ((c.lo, Const(0), lo), (c.hi, hi, fold_size(size - hi))):
        if bound is None:
            continue
        pinned = {n: (Slice(first, count), At(bound))}
        dst, src = _views(name, shape, view, tile_dim, inside, pinned)
        load = Load(dst, View(rd.tensor, tuple(src)), loc=rd.loc)
        trips = fold_size(Min(Const(1), count))
        b.emit(Loop(b.fresh("g"), 0, trips, body=(load,), loc=rd.loc))


def _edge_cols(b, rd, name, shape, view, tile_dim, inside, n: int, c: Clamped, dtype) -> None:
    """Columns of the tile outside the bounds: the tile's edge column broadcast over them (where
    the chunk has no column inside the bounds, the edge column is first loaded from HBM)."""
    lo, hi = inside[n]
    size = view[n].size
    rows = shape[0]
    fills = b.nested()
    for bound, first, count, edge in (
        (c.lo, Const(0), lo, lo),
        (c.hi, hi, fold_size(size - hi), fold_size(hi - Const(1))),
    ):
        if bound is not None:
            _broadcast_col(fills, rd, name, rows, first, count, edge, dtype)
    b.emit(Loop(b.fresh("g"), 0, fold_size(Min(Const(1), hi - lo)), body=tuple(fills.stmts)))
    # no column inside (an extent narrower than the offset): the edge the chunk lies beyond
    for bound, beyond in ((c.lo, fold_size(size - lo)), (c.hi, hi)):
        if bound is None:
            continue
        one = b.nested()
        pinned = {n: (Slice(Const(0), Const(1)), At(bound))}
        dst, src_dims = _views(name, shape, view, tile_dim, inside, pinned)
        one.emit(Load(dst, View(rd.tensor, tuple(src_dims)), loc=rd.loc))
        _broadcast_col(one, rd, name, rows, Const(1), fold_size(size - Const(1)), Const(0), dtype)
        trips = fold_size(Max(Const(0), Const(1) - beyond))
        b.emit(Loop(b.fresh("g"), 0, trips, body=tuple(one.stmts), loc=rd.loc))


def _broadcast_col(b, rd, name, rows, first, count, edge, dtype) -> None:
    """Columns ``[first, first + count)`` of the tile = its column ``edge``: zeros, then the
    column added (or-ed) along the free dim (none when ``count`` is 0)."""
    cols = View(name, (Slice(Const(0), rows), Slice(first, count)))
    column = View(name, (Slice(Const(0), rows), Slice(edge, Const(1))))
    fill = (
        Memset(cols, Lit(0.0, "float32"), loc=rd.loc),
        TensorScalar(cols, cols, _fill_op(dtype), column, loc=rd.loc),
    )
    b.emit(Loop(b.fresh("g"), 0, fold_size(Min(Const(1), count)), body=fill, loc=rd.loc))
