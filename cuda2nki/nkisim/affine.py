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
