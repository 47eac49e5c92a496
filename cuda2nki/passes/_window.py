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
    out: SizeExpr | None = None
    for key in sorted(terms, key=str):
        k = terms[key]
        if k == 0:
            continue
        t = key if abs(k) == 1 else Mul(Const(abs(k)), key)
        out = (
            (t if k > 0 else Sub(Const(0), t))
            if out is None
            else (Add(out, t) if k > 0 else Sub(out, t))
        )
    if out is None:
        return Const(const)
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

    first, whole, last = CeilDiv(a, cols), z // cols, z % cols
    head_row, head_col = a // cols, a % cols
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
