"""Gathers whose row index follows the partition and whose column index follows the free axis
(``src[r(i), c(j)]``): whole rows fetched once per tile, elements picked on chip.

A resampling kernel reads its source at clamped, scaled coordinates (``tex2D(t, (x + 0.5) *
sx, (y + 0.5) * sy)`` with linear filtering becomes four reads ``src[r0(i), c0(j)]``,
``src[r0(i), c1(j)]``, ``src[r1(i), c0(j)]``, ``src[r1(i), c1(j)]``).  The row index depends on
the partition only, the column index on the free position only -- but both on data (a scaled
float, a runtime step), so no strided view covers them.  Read element by element, each output
is its own 4-byte DMA.  Instead, per tile of ``rows`` partitions:

* the rows ``r(i)`` are fetched whole by one indirect DMA (one row index per partition, the
  source row's width of contiguous bytes each), shared by every read of the same rows -- or,
  where the row index is a plain affine index of the partition axis (``src[i, c(j)]``, a
  horizontal resampling), by one strided DMA;
* the column indices ``c(j)`` (one ``[rows, cols]`` tile, the same on every partition) are
  converted to uint32 once per distinct index;
* each read is one ``nc_n_gather``: partition ``p`` picks ``rows_tile[p, c(p, j)]``.

Both indices are clamped into the tensor first (one instruction each): an index outside it is
undefined behaviour in CUDA, and a read under a select may be outside where the select picks the
other branch (a border-addressed texture).

The fetched rows take the source's whole width of SBUF per partition (4 KiB per 1024 fp32
columns): sized for images, not for rows of hundreds of thousands of elements.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cuda2nki.ir.nodes import Add as SAdd
from cuda2nki.ir.nodes import (
    Alloc,
    Binary,
    Const,
    Dyn,
    IndexValue,
    Indirect,
    Lit,
    Load,
    Read,
    Slice,
    Sym,
    TensorCopy,
    TensorGather,
    TensorScalar,
    View,
)
from cuda2nki.ir.nodes import Sub as SSub
from cuda2nki.ir.ops import Buffer, Op
from cuda2nki.passes import _tiles as T
from cuda2nki.passes._analysis import moves_along
from cuda2nki.passes._dyn_sum import has_dyn
from cuda2nki.passes._index import ROW, access_class, dims_for

if TYPE_CHECKING:
    from cuda2nki.passes.lower_tiles import LowerTiles


def applies(rd: Read, p_axis: str, f_axis: str) -> bool:
    """Whether ``rd`` is ``x[r(p), c(f)]``: a 2-D read, its column index data-dependent and
    moving along the free axis, its row index free of the free axis (data-dependent, or a plain
    affine index of the partition axis: ``x[p, c(f)]``)."""
    if not f_axis or len(rd.index) != 2 or not isinstance(rd.index[1], Dyn):
        return False
    row, col = rd.index
    if f_axis not in moves_along(col.expr):
        return False
    if isinstance(row, Dyn):
        return f_axis not in moves_along(row.expr)
    got = access_class((row,), p_axis, "")
    return not has_dyn(row) and got is not None and got[0] == ROW


def row_pick(lw: LowerTiles, b: T.Builder, comp: T.TileExprCompiler, rd: Read, p_axis, box, dt):
    """``rd`` (see :func:`applies`) as rows fetched whole and elements picked on chip; ``box``
    is the tile's (first row, rows, first column, columns)."""
    rows, cols = box[1], box[3]
    height, width = lw.decl(rd.tensor).shape
    if isinstance(rd.index[0], Dyn):
        fetched = _rows(lw, b, comp, rd, rows, height, width, dt)
    else:
        fetched = _plain_rows(b, comp, rd, p_axis, box, width, dt)
    picks = _columns(b, comp, rd, width)
    if picks.kind != T.FULL:
        return None
    name = b.fresh(f"{rd.tensor}_pick")
    b.emit(Alloc(name, (rows, cols), dt, Buffer.SBUF, loc=rd.loc))
    dst = T.whole(name, rows, cols)
    b.emit(TensorGather(dst, fetched, picks.operand, loc=rd.loc))
    return T.Val(T.FULL, dst, dt)


def _index(comp: T.TileExprCompiler, expr, key: tuple, limit, loc) -> T.Val:
    """An index expression compiled as address arithmetic and clamped to ``[0, limit - 1]``."""
    if key in comp.cache:
        return comp.cache[key]
    comp.addressing, saved = True, comp.addressing
    try:
        v = comp.compile(expr)
    finally:
        comp.addressing = saved
    if v.kind == T.IMM:
        v = comp.materialize_row(v)
    if _clamped(expr, limit):
        comp.cache[key] = v
        return v
    dst = comp.tile("at", v.kind, "float32")
    last = _last(comp, limit)
    comp.b.emit(
        TensorScalar(
            dst, v.operand, Op.MAX, Lit(0.0, "float32"), op1=Op.MIN, operand1=last, loc=loc
        )
    )
    comp.cache[key] = T.Val(v.kind, dst)
    return comp.cache[key]


def _clamped(expr, limit) -> bool:
    """Whether ``expr`` is clamped into ``[0, limit - 1]`` already (``min(max(x, 0), limit - 1)``
    in either order, as a clamp-addressed texture's index is)."""
    if not isinstance(expr, Binary) or expr.op not in (Op.MIN, Op.MAX):
        return False
    inner, bound = expr.a, expr.b
    if not isinstance(inner, Binary) or {expr.op, inner.op} != {Op.MIN, Op.MAX}:
        return False
    low, high = (inner.b, bound) if expr.op == Op.MIN else (bound, inner.b)
    return _is_value(low, Const(0)) and _is_value(high, limit - Const(1))


def _is_value(e, size) -> bool:
    """Whether the value expression ``e`` is the size ``size`` (a literal or an index value)."""
    if isinstance(e, Lit):
        return _terms(size) == (int(e.value), frozenset())
    return isinstance(e, IndexValue) and _terms(e.expr) == _terms(size) is not None


def _terms(e) -> tuple[int, frozenset] | None:
    """A sum of sizes and constants as (constant, its symbols with their coefficients)."""
    if isinstance(e, Const):
        return int(e.value), frozenset()
    if isinstance(e, Sym):
        return 0, frozenset({(e.name, 1)})
    if isinstance(e, (SAdd, SSub)):
        a, b = _terms(e.a), _terms(e.b)
        if a is None or b is None:
            return None
        sign = 1 if isinstance(e, SAdd) else -1
        coeffs: dict[str, int] = dict(a[1])
        for name, k in b[1]:
            coeffs[name] = coeffs.get(name, 0) + sign * k
        return a[0] + sign * b[0], frozenset((n, k) for n, k in coeffs.items() if k)
    return None


def _last(comp: T.TileExprCompiler, limit):
    """``limit - 1`` as a tensor-scalar operand (a literal, or a size computed on a tile)."""
    if isinstance(limit, Const):
        return Lit(float(limit.value - 1), "float32")
    return comp.materialize_row(comp.compile(IndexValue(limit - Const(1)))).operand


def _rows(lw, b: T.Builder, comp, rd: Read, rows, height, width, dt) -> View:
    """The source rows ``r(p)`` of this tile, fetched whole (once per distinct row index)."""
    key = ("row_pick:rows", rd.tensor, rd.index[0])
    if key in comp.cache:
        return comp.cache[key]
    at = _index(comp, rd.index[0].expr, ("row_pick:r", rd.index[0]), height, rd.loc)
    idx = lw._row_index(b, comp, rd, at, rows)
    name = b.fresh(f"{rd.tensor}_rows")
    b.emit(Alloc(name, (rows, width), dt, Buffer.SBUF, loc=rd.loc))
    dst = T.whole(name, rows, width)
    src = View(rd.tensor, (Indirect(idx.operand), Slice(Const(0), width)))
    b.emit(Load(dst, src, loc=rd.loc))
    comp.cache[key] = dst
    return dst


def _plain_rows(b: T.Builder, comp, rd: Read, p_axis: str, box, width, dt) -> View:
    """The source rows ``a * p + c`` of this tile, fetched whole by one strided DMA."""
    key = ("row_pick:rows", rd.tensor, rd.index[0])
    if key in comp.cache:
        return comp.cache[key]
    r0, rows, c0, cols = box
    _, dims = access_class((rd.index[0],), p_axis, "")
    view = (*dims_for(dims, p_axis, "", r0, rows, c0, cols), Slice(Const(0), width))
    name = b.fresh(f"{rd.tensor}_rows")
    b.emit(Alloc(name, (rows, width), dt, Buffer.SBUF, loc=rd.loc))
    dst = T.whole(name, rows, width)
    b.emit(Load(dst, View(rd.tensor, view), loc=rd.loc))
    comp.cache[key] = dst
    return dst


def _columns(b: T.Builder, comp, rd: Read, width) -> T.Val:
    """The column index ``c(p, f)`` of every element as a uint32 tile (once per index)."""
    key = ("row_pick:cols", rd.index[1])
    if key in comp.cache:
        return comp.cache[key]
    at = _index(comp, rd.index[1].expr, ("row_pick:c", rd.index[1]), width, rd.loc)
    if at.kind != T.FULL:
        return at
    dst = comp.tile("picks", T.FULL, "uint32")
    b.emit(TensorCopy(dst, at.operand, loc=rd.loc))
    comp.cache[key] = T.Val(T.FULL, dst, "uint32")
    return comp.cache[key]
