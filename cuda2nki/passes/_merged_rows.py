"""Reads through merged dims in a tiled layout (not a pass).

A tensor bound N-D (``dout`` as ``[B, T, OC]``) that the kernel walks over merged dims
(``dout[r * OC + o]`` with ``r < B * T``) lifts to a read that takes the merged index back apart
along the bound dims: ``dout[r // T, r % T, o]``.  Row-major storage makes those dims one dim of
extent ``B * T`` whose neighbours lie ``OC`` elements apart, so the read is an affine access of
that merged view, and a block of its rows is one strided DMA of the flat tensor (IR ``Rows``:
row ``r`` holds the block's columns from ``start + r * OC``), not one DMA per ``(b, t)``.

Before::  dout[r // T, r % T, o]                      (not affine in r)
After::   dout[r, o] over the view [B * T, OC]         (a block: Rows(r0 * OC + o0, rows, OC, cols))

A group of dims ``k .. m`` merges when its indices are exactly ``a // (s[k+1] * ... * s[m])``,
``a // (s[j+1] * ... * s[m]) % s[j]`` for the dims between and ``a % s[m]``, for one index
``a`` (products in any order); that is the offset ``a * stride[m]`` for every ``a >= 0``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cuda2nki.ir.nodes import At, Const, FloorDiv, Mod, Mul, Rows, SizeExpr, Slice
from cuda2nki.passes._index import FULL, ROW, _fold, access_class, dims_for, plus


@dataclass(frozen=True)
class MergedRead:
    """A read's index over the merged view of its tensor, with each merged dim's stride."""

    index: tuple[SizeExpr, ...]
    strides: tuple[SizeExpr, ...]


def row_strides(shape: Sequence[SizeExpr]) -> list[SizeExpr]:
    """Elements between neighbours along each dim of a row-major tensor."""
    out: list[SizeExpr] = []
    acc: SizeExpr = Const(1)
    for d in reversed(shape):
        out.append(acc)
        acc = d if acc == Const(1) else _fold(d * acc)
    return out[::-1]


def merged_read(index: Sequence[SizeExpr], shape: Sequence[SizeExpr]) -> MergedRead | None:
    """``index`` over the view that merges each group of dims it takes apart from one merged
    index, or None when no group merges (see the module docstring)."""
    if len(index) != len(shape) or len(shape) < 2:
        return None
    strides = row_strides(shape)
    out_ix: list[SizeExpr] = []
    out_st: list[SizeExpr] = []
    k = 0
    while k < len(shape):
        end, a = _group(index, shape, k)
        if a is None:
            out_ix.append(index[k])
            out_st.append(strides[k])
            k += 1
            continue
        out_ix.append(a)
        out_st.append(strides[end])
        k = end + 1
    if len(out_ix) == len(index):
        return None
    return MergedRead(tuple(out_ix), tuple(out_st))


def _group(index: Sequence[SizeExpr], shape: Sequence[SizeExpr], k: int):
    """The last dim and the merged index of the longest group starting at dim ``k``."""
    for end in range(len(shape) - 1, k, -1):
        last = index[end]
        if not (isinstance(last, Mod) and _same(last.b, shape[end])):
            continue
        a = last.a
        if all(_takes_apart(index[d], a, shape, d, end, first=d == k) for d in range(k, end)):
            return end, a
    return k, None


def _takes_apart(e: SizeExpr, a: SizeExpr, shape, d: int, end: int, first: bool) -> bool:
    """``e`` is ``a // prod(shape[d+1 .. end])``, then ``% shape[d]`` unless ``d`` is first."""
    if not first:
        if not (isinstance(e, Mod) and _same(e.b, shape[d])):
            return False
        e = e.a
    return isinstance(e, FloorDiv) and e.a == a and _same_product(e.b, shape[d + 1 : end + 1])


def _factors(e: SizeExpr) -> list[SizeExpr]:
    if isinstance(e, Mul):
        return _factors(e.a) + _factors(e.b)
    return [] if e == Const(1) else [e]


def _same(x: SizeExpr, y: SizeExpr) -> bool:
    return _same_product(x, (y,))


def _same_product(e: SizeExpr, dims: Sequence[SizeExpr]) -> bool:
    want = [f for d in dims for f in _factors(d)]
    return sorted(map(repr, _factors(e))) == sorted(map(repr, want))


def merged_class(index, shape, p: str, f: str) -> tuple[str, tuple, MergedRead] | None:
    """``access_class`` of a read over its merged view when it moves with the partition axis
    ``p`` (FULL or ROW), with the merged read; None when nothing merges or it does not."""
    m = merged_read(index, shape)
    got = access_class(m.index, p, f) if m is not None else None
    if got is None or got[0] not in (FULL, ROW):
        return None
    one = dims_for(got[1], p, f, Const(0), Const(1), Const(0), Const(1))
    if rows_of(one, m) is None:
        return None
    return got[0], got[1], m


def rows_of(view: Sequence, m: MergedRead) -> tuple | None:
    """One ``Rows`` selection of the flat tensor for the view ``dims_for`` made of a merged
    FULL or ROW read: the partition dim's slice (the first) gives the rows and their stride,
    a last, unit-stride slice the columns, fixed dims the start; None for any other view."""
    start: SizeExpr = Const(0)
    slices = [(n, d) for n, d in enumerate(view) if isinstance(d, Slice)]
    for n, d in enumerate(view):
        at = d.index if isinstance(d, At) else d.start
        if at != Const(0):
            start = plus(start, at if m.strides[n] == Const(1) else _fold(at * m.strides[n]))
    if not slices or len(slices) > 2:
        return None
    pn, pd = slices[0]
    if len(slices) == 2:
        fn, fd = slices[1]
        if fn != len(view) - 1 or fd.step != 1 or m.strides[fn] != Const(1):
            return None
        width = fd.size
    else:
        width = Const(1)
    stride = m.strides[pn] if pd.step == 1 else _fold(Const(pd.step) * m.strides[pn])
    return (Rows(start, pd.size, stride, width),)


def flat_merged(index, shape, i: str):
    """The offset ``c`` of a read that takes the flat index ``i + c`` apart along every dim of its
    tensor (``field[k // W, k % W]`` of a ``[R, W]`` field is element ``k`` of the row-major
    storage), or None for any other read."""
    m = merged_read(index, shape)
    if m is None or len(m.index) != 1 or m.strides[0] != Const(1):
        return None
    got = access_class(m.index, i, "")
    if got is None or got[0] != ROW or got[1][0].k != 1:
        return None
    return got[1][0].c


def flat_chunk_rows(index, shape, i: str, base: SizeExpr, rows: SizeExpr, cols: SizeExpr):
    """The ``Rows`` view of such a read (``flat_merged``) on a flat chunk (``i = base + cols * p
    + f``): row ``p`` holds ``cols`` consecutive elements from ``base + c + cols * p``, one DMA of
    the flat tensor.  None for any other read."""
    c = flat_merged(index, shape, i)
    return None if c is None else (Rows(plus(base, c), rows, cols, cols),)
