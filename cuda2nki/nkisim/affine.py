"""Legacy affine indexing without per-element index grids (``NkiTensor._advanced``'s common case).

A legacy subscript such as ``t[k * 128 + nl.arange(128)[:, None], m * 128 + nl.arange(128)[None,
:]]`` is built from index tiles whose affine form is known from their construction
(``IndexExpr.aff``: first value and one stride per axis).  Such an access is a strided view; this
module finds its shape, offset and strides from those forms alone, with the same bounds rule as
the general path (every index inside its dimension), and builds it without ``as_strided``'s
Python overhead.
"""

from __future__ import annotations

import numpy as np


def broadcast_small(shapes: list[tuple[int, ...]]) -> tuple[int, ...] | None:
    """``np.broadcast_shapes`` of a few short shapes, or ``None`` when they do not broadcast."""
    n = max(len(s) for s in shapes)
    out = [1] * n
    for s in shapes:
        lead = n - len(s)
        for i, m in enumerate(s):
            j = lead + i
            o = out[j]
            if o == 1:
                out[j] = m
            elif m != 1 and m != o:
                return None
    return tuple(out)


def tile_slices(
    aff0: tuple, ishape0: tuple, aff1: tuple, ishape1: tuple, shape: tuple
) -> tuple[slice, slice] | None:
    """The basic slices equal to a 2-D subscript ``[k0, k1]`` whose index tiles are a column
    ``first0 + s0 * nl.arange(P)[:, None]`` and a row ``first1 + s1 * nl.arange(F)[None, :]``
    (``P``, ``F`` > 1, positive steps, inside ``shape``); ``None``: another subscript."""
    if len(ishape0) != 2 or len(ishape1) != 2 or len(aff0[1]) != 2 or len(aff1[1]) != 2:
        return None
    p, one0 = ishape0
    one1, f = ishape1
    first0, (s0, z0) = aff0
    first1, (z1, s1) = aff1
    if one0 != 1 or one1 != 1 or z0 or z1 or p < 2 or f < 2 or s0 <= 0 or s1 <= 0:
        return None
    end0 = first0 + s0 * (p - 1)
    end1 = first1 + s1 * (f - 1)
    if first0 < 0 or first1 < 0 or end0 >= shape[0] or end1 >= shape[1]:
        return None
    return slice(first0, end0 + 1, s0), slice(first1, end1 + 1, s1)


def affine_view(
    a: np.ndarray, boff: int, flat: np.ndarray, shape: tuple, affs: list, ishapes: list
) -> tuple[np.ndarray, int] | None:
    """The view ``a[ix0, ix1, ...]`` (``a`` a strided view ``boff`` bytes into the storage
    buffer ``flat``) for index tiles of affine forms ``affs`` and shapes ``ishapes``, and its
    byte offset in ``flat``; ``None`` when a form does not cover its tile's axes, a tile is
    empty, an index falls outside its dimension, or a stride is negative (the general path
    decides)."""
    bshape = broadcast_small(ishapes)
    if bshape is None:
        return None
    nb = len(bshape)
    nk = len(affs)
    isz = a.itemsize
    astr = a.strides
    f0 = 0  # element offset from a's first element
    strides = [0] * nb
    diagonal = nb == nk  # index tile d varies along output axis d only: a basic slice
    slices = []
    for d in range(nk):
        first, own = affs[d]
        ishape = ishapes[d]
        if len(own) != len(ishape) or 0 in ishape:
            return None
        hi = first
        for s_, m in zip(own, ishape):
            if s_ < 0:
                return None
            hi += s_ * (m - 1)
        if first < 0 or hi >= shape[d]:
            return None
        step = astr[d] // isz
        if step < 0:
            return None
        f0 += step * first
        lead = nb - len(ishape)  # broadcasting aligns the index tile's axes to the right
        for k, s_ in enumerate(own):
            strides[lead + k] += step * s_
            if diagonal and lead + k != d and ishape[k] != 1:
                diagonal = False
        if diagonal:
            m = ishape[d - lead] if d >= lead else 1
            s_ = own[d - lead] if d >= lead else 0
            if m != bshape[d] or m == 1:
                diagonal = False  # a size-1 axis: stride 0, as the general path makes it
            else:
                slices.append(slice(first, first + s_ * (m - 1) + 1, s_ or 1))
    off = boff + f0 * isz
    if diagonal:
        return a[tuple(slices)], off
    out_shape = bshape + tuple(shape[nk:])
    el = [s_ * isz for s_ in strides] + list(astr[nk:])
    if any(s_ < 0 for s_ in el):
        return None
    base = flat if a.dtype == flat.dtype else flat.view(a.dtype)
    return np.ndarray(out_shape, a.dtype, base, off, tuple(el)), off


def aff_grid(aff: tuple, shape: tuple[int, ...]) -> np.ndarray:
    """The int64 index grid of ``shape`` whose affine form is ``aff`` (``first + sum(strides[k]
    * i_k)``, one stride per axis)."""
    first, strides = aff
    out = np.full(shape, first, dtype=np.int64)
    nd = len(shape)
    for k, s_ in enumerate(strides):
        n = shape[k]
        if s_ and n > 1:
            out += (np.arange(n, dtype=np.int64) * s_).reshape((n,) + (1,) * (nd - k - 1))
    return out


#: comparison ufunc name -> whether ``lo..hi`` (the grid's range) compared with ``c`` holds
#: for every element
_ALWAYS = {
    "less": lambda lo, hi, c: hi < c,
    "less_equal": lambda lo, hi, c: hi <= c,
    "greater": lambda lo, hi, c: lo > c,
    "greater_equal": lambda lo, hi, c: lo >= c,
}
_ALL_TRUE: dict[tuple[int, ...], np.ndarray] = {}


def aff_compare(aff: tuple, shape: tuple[int, ...], op: str, c: int) -> np.ndarray | None:
    """``grid <op> c`` for the grid of affine form ``aff`` when it holds for every element (the
    tail mask of a full tile): a read-only all-true array of ``shape``; ``None`` otherwise (the
    caller compares element by element)."""
    always = _ALWAYS.get(op)
    if always is None or len(aff[1]) != len(shape) or 0 in shape:
        return None
    lo = hi = aff[0]
    for s_, n in zip(aff[1], shape):
        span = s_ * (n - 1)
        if span < 0:
            lo += span
        else:
            hi += span
    if not always(lo, hi, c):
        return None
    t = _ALL_TRUE.get(shape)
    if t is None:
        t = np.ones(shape, dtype=bool)
        t.flags.writeable = False
        _ALL_TRUE[shape] = t
    return t
