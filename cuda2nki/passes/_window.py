"""Padded shifted reads of a 1-D tensor on a flat ``[rows, cols]`` chunk (window stencils).

A flat chunk holds the consecutive elements ``s, s+1, ..., s + rows*cols - 1`` of the domain, row
after row.  A neighbour read ``lo <= i + c < hi ? x[i + c] : pad`` on it is the chunk shifted by
``c``: the tile is filled with ``pad`` and only the elements inside ``[lo, hi)`` are fetched -- a
partial first row, the whole rows, a partial last row (each DMA behind a 0/1-trip loop, so the
sizes stay symbolic).  Not a pass.
"""

from __future__ import annotations

from cuda2nki.ir.nodes import (
    Add,
    Alloc,
    At,
    Binary,
    CeilDiv,
    Const,
    IndexValue,
    Lit,
    Load,
    Loop,
    Max,
    Memset,
    Min,
    Mul,
    Read,
    Rows,
    Select,
    SizeExpr,
    Slice,
    Sub,
    Sym,
    View,
)
from cuda2nki.ir.ops import Buffer, Op
from cuda2nki.passes import _tiles as T
from cuda2nki.passes._index import affine1, plus


def window_bounds(e: Select, axis: str) -> tuple[Read, object, object, object, float] | None:
    """``lo <= i + c < hi ? x[i + c] : pad`` (any conjunction of such bounds on ``i + c'``):
    (the read, ``c``, ``lo``, ``hi`` -- bounds on the read's own index -- and ``pad``)."""
    if not (isinstance(e.a, Read) and len(e.a.index) == 1 and isinstance(e.b, Lit)):
        return None
    at = affine1(e.a.index[0], frozenset({axis}))
    if at is None or at.axis != axis or at.k != 1:
        return None
    lo, hi = None, None
    for cmp in _conjuncts(e.cond):
        if not (isinstance(cmp, Binary) and cmp.op == Op.LT):
            return None
        if not (isinstance(cmp.a, IndexValue) and isinstance(cmp.b, IndexValue)):
            return None
        a, b = affine1(cmp.a.expr, frozenset({axis})), affine1(cmp.b.expr, frozenset({axis}))
        if a is None or b is None:
            return None
        if a.axis == axis and b.axis is None and a.k == 1:  # i + ca < cb: i + c < cb - ca + c
            h = plus(b.c - a.c, at.c)
            hi = h if hi is None else Min(hi, h)
        elif b.axis == axis and a.axis is None and b.k == 1:  # ca < i + cb: i + c >= ...
            low = plus(a.c - b.c + Const(1), at.c)
            lo = low if lo is None else Max(lo, low)
        else:
            return None
    return e.a, at.c, lo, hi, float(e.b.value)


def simple(e: SizeExpr) -> SizeExpr:
    """``e`` with its linear part collected (``2 - j + 1 + (j - 3)`` -> ``0``) and constant
    min/max folded, so the spelled sizes stay short."""
    if isinstance(e, Min | Max):
        a, b = simple(e.a), simple(e.b)
        if isinstance(a, Const) and isinstance(b, Const):
            return Const(min(a.value, b.value) if isinstance(e, Min) else max(a.value, b.value))
        return a if a == b else type(e)(a, b)
    terms = _terms(e)
    const = terms.pop(None, 0)
    keys = sorted((k for k in terms if terms[k]), key=lambda k: (terms[k] < 0, str(k)))
    if not keys:
        return Const(const)
    out: SizeExpr | None = None
    if terms[keys[0]] < 0 and const > 0:  # ``1 - 65536 * t``, not ``0 - 65536 * t + 1``
        out, const = Const(const), 0
    for key in keys:
        k = terms[key]
        t = key if abs(k) == 1 else Mul(Const(abs(k)), key)
        if out is None:
            out = t if k > 0 else (Mul(Const(k), key) if abs(k) != 1 else Sub(Const(0), t))
        else:
            out = Add(out, t) if k > 0 else Sub(out, t)
    assert out is not None
    return out if const == 0 else (Add(out, Const(const)) if const > 0 else Sub(out, Const(-const)))


def _terms(e: SizeExpr) -> dict:
    if isinstance(e, Const):
        return {None: e.value}
    if isinstance(e, Add | Sub):
        out = _terms(e.a)
        for k, v in _terms(e.b).items():
            out[k] = out.get(k, 0) + (v if isinstance(e, Add) else -v)
        return out
    if isinstance(e, Mul) and isinstance(e.a, Const):
        return {k: e.a.value * v for k, v in _terms(e.b).items()}
    if isinstance(e, Mul) and isinstance(e.b, Const):
        return {k: e.b.value * v for k, v in _terms(e.a).items()}
    if isinstance(e, Min | Max):
        e = simple(e)
        if isinstance(e, Const):
            return {None: e.value}
    return {e if not isinstance(e, Sym) else e: 1}


def _conjuncts(c) -> list:
    if isinstance(c, Binary) and c.op == Op.LAND:
        return _conjuncts(c.a) + _conjuncts(c.b)
    return [c]


def padded_read(b: T.Builder, rd: Read, shift, lo, hi, pad: float, base, rows, cols, size, dt):
    """The chunk of ``rows x cols`` elements from ``base`` (plus ``shift``) of ``rd``'s tensor,
    ``pad`` outside ``[lo, hi)`` and outside the tensor (``size`` elements)."""
    name = b.fresh(f"{rd.tensor}_w")
    b.emit(Alloc(name, (rows, cols), dt, Buffer.SBUF, loc=rd.loc))
    b.emit(Memset(T.whole(name, rows, cols), Lit(pad, "float32"), loc=rd.loc))
    s = simple(plus(base, shift))  # the tensor element at tile position 0
    n = simple(rows * cols)
    lo = Const(0) if lo is None else simple(Max(Const(0), simple(lo)))
    hi = size if hi is None else simple(Min(size, simple(hi)))
    a = simple(Min(n, Max(Const(0), simple(lo - s))))  # tile positions [a, z) are fetched
    z = simple(Min(n, Max(a, simple(hi - s))))

    def fetch(row, col, nrows, ncols, trips) -> None:
        body = (
            Load(
                View(name, (Slice(row, nrows), Slice(col, ncols))),
                View(rd.tensor, (Slice(plus(s, row * cols + col), nrows * ncols),)),
                loc=rd.loc,
            ),
        )
        b.emit(Loop(b.fresh("g"), 0, trips, body=body, loc=rd.loc))

    # a ragged tile may have no columns (its loop then never runs, but its sizes are spelled
    # where the port starts): divide by at least 1, the same for every tile that has columns
    per = cols if isinstance(cols, Const) else simple(Max(Const(1), cols))
    first, whole, last = CeilDiv(a, per), z // per, z % per
    head_row, head_col = a // per, a % per
    head = Min(cols - head_col, z - a)  # a partial first row (to the row's end or to z)
    fetch(head_row, head_col, Const(1), head, Min(1, Min(head_col, Max(0, head))))
    full = Max(0, whole - first)
    fetch(first, Const(0), full, cols, Min(1, full))
    # a partial last row after the whole rows (not the first row again)
    fetch(whole, Const(0), Const(1), last, Min(1, Min(last, Max(0, whole - first + 1))))
    return T.Val(T.FULL, T.whole(name, rows, cols), dt)


def rect_bounds(e: Select, axes: dict) -> tuple[Read, list, float] | None:
    """``bounds ? x[a + c, b + d] : pad`` on a tile's axes (``axes``: name -> dim of the tile):
    (the read, per read dim ``(axis, offset, lo, hi)`` -- bounds on the read's own index -- and
    ``pad``)."""
    if not (isinstance(e.a, Read) and isinstance(e.b, Lit)):
        return None
    names = frozenset(axes)
    dims = []
    for ix in e.a.index:
        at = affine1(ix, names)
        if at is None or at.axis is None or at.k != 1:
            return None
        dims.append([at.axis, at.c, None, None])
    if len({d[0] for d in dims}) != len(dims):
        return None
    for cmp in _conjuncts(e.cond):
        if not (isinstance(cmp, Binary) and cmp.op == Op.LT):
            return None
        if not (isinstance(cmp.a, IndexValue) and isinstance(cmp.b, IndexValue)):
            return None
        a, b = affine1(cmp.a.expr, names), affine1(cmp.b.expr, names)
        if a is None or b is None:
            return None
        side = a if a.axis is not None else b
        dim = next((d for d in dims if d[0] == side.axis), None)
        if dim is None or side.k != 1 or (a.axis is not None and b.axis is not None):
            return None
        if a.axis is not None:  # ax + ca < cb: index < cb - ca + c
            h = simple(plus(b.c - a.c, dim[1]))
            dim[3] = h if dim[3] is None else Min(dim[3], h)
        else:  # ca < ax + cb: index >= ca - cb + 1 + c
            low = simple(plus(a.c - b.c + Const(1), dim[1]))
            dim[2] = low if dim[2] is None else Max(dim[2], low)
    return e.a, [tuple(d) for d in dims], float(e.b.value)


def padded_rect(b: T.Builder, rd: Read, dims: list, pad: float, tile: dict, shape, dt):
    """The tile of ``rd`` (``tile``: axis -> (start, size) of this tile along it), ``pad``
    outside each dim's ``[lo, hi)`` and outside the tensor: one DMA of the valid rectangle."""
    sizes = [tile[ax][1] for ax, *_ in dims]
    name = b.fresh(f"{rd.tensor}_w")
    b.emit(Alloc(name, tuple(sizes), dt, Buffer.SBUF, loc=rd.loc))
    b.emit(Memset(T.whole(name, *sizes), Lit(pad, "float32"), loc=rd.loc))
    dst, src, trips = [], [], None
    for (ax, off, lo, hi), extent in zip(dims, shape):
        start, n = tile[ax]
        first = simple(plus(start, off))  # the tensor index at tile position 0
        low = Const(0) if lo is None else simple(Max(Const(0), simple(lo)))
        high = extent if hi is None else simple(Min(extent, simple(hi)))
        s = simple(Min(n, Max(Const(0), simple(low - first))))
        e = simple(Min(n, Max(s, simple(high - first))))
        dst.append(Slice(s, simple(e - s)))
        src.append(Slice(simple(plus(first, s)), simple(e - s)))
        trips = simple(e - s) if trips is None else Min(trips, simple(e - s))
    body = (Load(View(name, tuple(dst)), View(rd.tensor, tuple(src)), loc=rd.loc),)
    b.emit(Loop(b.fresh("g"), 0, Min(1, trips), body=body, loc=rd.loc))
    return T.Val(T.FULL, T.whole(name, *sizes), dt)


def padded_halo(b: T.Builder, rd: Read, s, lo, hi, pad: float, rows, cols, width, size, dt) -> str:
    """Overlapping rows of ``rd``'s tensor with a padded boundary: row ``r`` of the ``rows x
    width`` tile holds the elements from ``s + r * cols`` (``pad`` outside ``[lo, hi)`` and outside
    the tensor of ``size`` elements).  A rolled tap loop reads tap ``j`` as the column window
    ``[j, j + cols)`` of it, so the window is loaded once for all the taps: the rows whose
    elements all lie inside by one DMA of overlapping rows, the rows across an edge by column
    blocks (see :func:`_edge_block`).  Returns the tile's name."""
    name = b.fresh(f"{rd.tensor}_h")
    b.emit(Alloc(name, (rows, width), dt, Buffer.SBUF, loc=rd.loc))
    b.emit(Memset(T.whole(name, rows, width), Lit(pad, "float32"), loc=rd.loc))
    lo = Const(0) if lo is None else simple(Max(Const(0), simple(lo)))
    hi = size if hi is None else simple(Min(size, simple(hi)))
    # rows [r0, r1) lie inside: s + r0 * cols >= lo and s + r * cols + width <= hi below r1
    # (a part of no rows may have no columns either: its sizes are still spelled)
    step = simple(Max(Const(1), cols))
    r0 = simple(Min(rows, CeilDiv(Max(Const(0), simple(lo - s)), step)))
    r1 = simple(Max(r0, Min(rows, simple(hi - s - width + cols) // step)))
    inner = Max(Const(0), simple(r1 - r0))
    src = View(rd.tensor, (Rows(simple(plus(s, r0 * cols)), inner, cols, width),))
    dst = View(name, (Slice(r0, inner), Slice(Const(0), width)))
    body = (Load(dst, src, loc=rd.loc),)
    b.emit(Loop(b.fresh("g"), 0, Min(1, inner), body=body, loc=rd.loc))
    blocks = simple(CeilDiv(width, step))
    for first, stop in ((Const(0), r0), (r1, rows)):  # the rows across the low and high edge
        k = b.fresh("k")
        edge = b.nested()
        _edge_block(edge, name, rd, s, lo, hi, cols, step, width, Sym(k), (first, stop))
        b.emit(Loop(k, 0, blocks, body=tuple(edge.stmts), loc=rd.loc))
    return name


def halo_tap(
    b: T.Builder, loops: list, rd: Read, shift, lo, hi, pad: float, base, rows, cols, size, dt
):
    """A padded shifted read inside a rolled tap loop (``shift = c + j`` for the innermost loop's
    step ``j``, bounds free of ``j``): the tap's column window of the padded halo tile shared by
    all the steps, the tile loaded ahead of the loop (see :func:`padded_halo`); None where the
    read is not such a tap."""
    if not loops:
        return None
    loop = loops[-1]
    at = affine1(simple(shift), frozenset({loop.axis}))
    if at is None or at.axis != loop.axis or at.k != 1:
        return None
    bounds = [simple(x) for x in (lo, hi, at.c, base, rows, cols, loop.extent) if x is not None]
    if any(loop.axis in x.free_syms() for x in bounds):
        return None
    lo = None if lo is None else simple(lo)
    hi = None if hi is None else simple(hi)
    key = (rd.tensor, at.c, lo, hi, pad, base, rows, cols)
    if key not in loop.tiles:
        pre = b.nested()
        width = simple(cols + loop.extent - Const(1))
        s = simple(plus(base, at.c))  # the element at the tile's first row and column
        loop.tiles[key] = padded_halo(pre, rd, s, lo, hi, pad, rows, cols, width, size, dt)
        loop.before.extend(pre.stmts)
    name = loop.tiles[key]
    view = View(name, (Slice(Const(0), rows), Slice(Sym(loop.axis), cols)))
    return T.Val(T.FULL, view, dt)


def _edge_block(b: T.Builder, name: str, rd: Read, s, lo, hi, cols, step, width, k, span) -> None:
    """Column block ``k`` (columns ``[k * cols, k * cols + cols)``, cut at ``width``) of the
    rows ``span`` of a :func:`padded_halo` tile.  Row ``r`` of the block holds the elements from
    ``s + (r + k) * cols``: at most ``cols`` of them, so the rows do not overlap and at most one
    row holds ``lo`` and one ``hi`` -- one DMA of the rows between, one for each of those two."""
    first, stop = span
    c0 = simple(k * cols)
    bw = simple(Min(cols, simple(width - c0)))
    sk = simple(plus(s, c0))
    ra = simple(CeilDiv(Max(Const(0), simple(lo - sk)), step))  # rows [ra, rb) lie inside
    rb = simple(Max(ra, simple(hi - sk - bw + cols) // step))
    fa = simple(Min(stop, Max(first, ra)))
    fb = simple(Min(stop, Max(fa, rb)))
    n = simple(fb - fa)
    src = View(rd.tensor, (Rows(simple(plus(sk, fa * cols)), n, cols, bw),))
    dst = View(name, (Slice(fa, n), Slice(c0, bw)))
    b.emit(Loop(b.fresh("g"), 0, Min(1, Max(Const(0), n)), body=(Load(dst, src, loc=rd.loc),)))
    for p in (simple(ra - Const(1)), rb):  # the rows holding lo and hi (empty where none does)
        at = simple(plus(sk, p * cols))
        a = simple(Min(bw, Max(Const(0), simple(lo - at))))
        z = simple(Min(bw, Max(a, simple(hi - at))))
        inside = Min(Max(Const(0), simple(p - first + Const(1))), Max(Const(0), simple(stop - p)))
        load = Load(
            View(name, (Slice(p, Const(1)), Slice(simple(c0 + a), simple(z - a)))),
            View(rd.tensor, (Slice(simple(plus(at, a)), simple(z - a)),)),
            loc=rd.loc,
        )
        trips = Min(Const(1), Min(inside, Max(Const(0), simple(z - a))))
        b.emit(Loop(b.fresh("g"), 0, trips, body=(load,), loc=rd.loc))


#: the most steps of a rolled tap loop whose per-step scalars are loaded at once
MAX_TAPS = 512


def hoisted_tap(b: T.Builder, loops: list, rd: Read, rows, dt, shape, alloc_rows=None):
    """A per-step scalar of rolled tap loops (the filter tap ``w[j]`` of ``sum_j w[j] * x[i +
    j]``, ``f[k, l]`` of a 2-D tap nest): the step's column of one ``[rows, taps]`` tile of all
    the taps, loaded (broadcast to the partitions) once ahead of the outermost loop it moves
    with instead of one DMA per step.  Each loop moves one dim as ``c + j``, the dims moved by
    inner loops are whole and contiguous (the taps are one row-major block: tap ``(k, l)`` is
    column ``k * L + l``).  None where the read is not such a tap.  ``alloc_rows``: the tile's
    partitions where they may exceed ``rows`` (the largest row tile's, so that the load does not
    depend on the row tile and can be hoisted further)."""
    axes = {lp.axis: lp for lp in loops}
    dims, moving = [], []
    for ix in rd.index:
        at = affine1(simple(ix), frozenset(axes))
        if at is None or at.c.free_syms() & set(axes) or at.axis is not None and at.k != 1:
            return None
        if at.axis is None:
            dims.append(At(at.c))
        else:
            moving.append(axes[at.axis])
            dims.append(Slice(at.c, axes[at.axis].extent))
    order = [lp for lp in loops if lp in moving]
    if not moving or moving != order or any(lp.axis in rows.free_syms() for lp in moving):
        return None
    if len(moving) > 1 and not _one_block(dims, shape):
        return None
    count = Const(1)
    for lp in moving:
        if not isinstance(lp.extent, Const) or lp.extent.value <= 0:
            if len(moving) > 1:
                return None
        count = simple(count * lp.extent)
    if isinstance(count, Const) and count.value > MAX_TAPS:
        return None
    outer = moving[0]
    alloc_rows = rows if alloc_rows is None else alloc_rows
    key = ("taps", rd.tensor, tuple(dims), alloc_rows)
    if key not in outer.tiles:
        name = b.fresh(f"{rd.tensor}_taps")
        outer.before.append(Alloc(name, (alloc_rows, count), dt, Buffer.SBUF, loc=rd.loc))
        whole = T.whole(name, alloc_rows, count)
        outer.before.append(Load(whole, View(rd.tensor, tuple(dims)), loc=rd.loc))
        outer.tiles[key] = name
    col: SizeExpr = Const(0)
    for lp in moving:
        col = simple(col * lp.extent + Sym(lp.axis))
    view = View(outer.tiles[key], (Slice(Const(0), rows), Slice(col, Const(1))))
    return T.Val(T.ROW, view, dt)


def halo_rect(b: T.Builder, loops: list, rd: Read, dims: list, pad: float, tile: dict, shape, dt):
    """A padded neighbour read of a row tile inside a rolled tap loop whose step ``j`` shifts
    the free axis (``x[i + k - 1, c + j - 1]``): the tap's column window of the tile widened by
    the loop's extent less one, loaded ahead of the loop (see :func:`padded_rect`).  A step
    that shifts the partition axis moves each element to another partition: a DMA per step,
    None here, as where the read is not such a tap."""
    if not loops:
        return None
    loop = loops[-1]
    free = dims[-1][0]
    moved = [d for d in dims if loop.axis in simple(d[1]).free_syms()]
    if len(moved) != 1 or moved[0][0] != free:
        return None
    at = affine1(simple(moved[0][1]), frozenset({loop.axis}))
    if at is None or at.axis != loop.axis or at.k != 1:
        return None
    axis, _, lo, hi = moved[0]
    rest = [x for d in dims for x in d[2:] if x is not None] + [loop.extent]
    rest += [x for v in tile.values() for x in v]
    if any(loop.axis in simple(x).free_syms() for x in rest):
        return None
    start, n = tile[axis]
    wide = {**tile, axis: (start, simple(n + loop.extent - Const(1)))}
    dims = [(a, at.c if a == axis else off, low, high) for a, off, low, high in dims]
    key = ("rect", rd.tensor, tuple(tuple(d) for d in dims), pad, tuple(sorted(wide.items())))
    if key not in loop.tiles:
        pre = b.nested()
        loop.tiles[key] = padded_rect(pre, rd, dims, pad, wide, shape, dt).operand.tensor
        loop.before.extend(pre.stmts)
    rows = tile[dims[0][0]][1]
    view = View(loop.tiles[key], (Slice(Const(0), rows), Slice(Sym(loop.axis), n)))
    return T.Val(T.FULL, view, dt)


def _one_block(dims: list, shape) -> bool:
    """The moving dims are the last ones and all but the first span their whole tensor dim:
    the taps are one contiguous row-major block."""
    first = next(k for k, d in enumerate(dims) if isinstance(d, Slice))
    tail = list(zip(dims, shape))[first:]
    if any(not isinstance(d, Slice) for d, _ in tail):
        return False
    return all(d.start == Const(0) and simple(d.size) == simple(n) for d, n in tail[1:])
