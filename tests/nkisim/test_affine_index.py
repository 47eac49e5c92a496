"""Legacy affine indexing (``t[m * 128 + i_p, i_f]``): the strided view found from the index tiles
themselves reads the same elements as the general per-element index grid."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_

from cuda2nki.nkisim import state as st
from cuda2nki.nkisim.tensor import IndexExpr, NkiTensor, wrap_host


@pytest.fixture
def sim():
    state = st.SimState()
    st.push(state)
    yield state
    st.pop()


def _tile(start: int, step: int, n: int, axis: int, ndim: int, known: bool = False) -> IndexExpr:
    """``start + step * i`` along ``axis``; ``known``: built by NKI arithmetic on an arange, so
    the index tile carries its affine form (otherwise it is found from the values)."""
    if known:
        r = IndexExpr.range(0, n, 1) * step + start
        if ndim == 1:
            return r
        return r[:, None] if axis == 0 else r[None, :]
    shape = [1] * ndim
    shape[axis] = n
    return IndexExpr((start + step * np.arange(n)).reshape(shape))


def _both(t: NkiTensor, key: tuple) -> tuple[NkiTensor, np.ndarray]:
    fast = t[key]
    with pytest.MonkeyPatch.context() as m:
        m.setattr(NkiTensor, "_affine_view", lambda self, *args: None)
        general = t[key].values()
    return fast, general


index = st_.tuples(
    st_.integers(-3, 12), st_.integers(-3, 3), st_.integers(1, 6), st_.booleans(), st_.booleans()
)


@settings(max_examples=150, deadline=None)
@given(
    shape=st_.tuples(st_.integers(1, 12), st_.integers(1, 12), st_.integers(1, 4)),
    ndim=st_.integers(2, 3),
    specs=st_.lists(index, min_size=1, max_size=2),
    sliced=st_.booleans(),
    known=st_.booleans(),
)
def test_affine_view_reads_what_the_index_grid_reads(shape, ndim, specs, sliced, known) -> None:
    state = st.SimState()
    st.push(state)
    try:
        host = np.arange(np.prod(shape[:ndim]), dtype=np.float32).reshape(shape[:ndim])
        t = wrap_host(host)
        if sliced and shape[0] > 2:
            t = t[1:, :]  # a view that does not start at the storage's first element
        key = tuple(
            _tile(start, step, n, 0, 1, known)
            if flat
            else _tile(start, step, n, int(flip), 2, known)
            for start, step, n, flip, flat in specs
        )
        try:
            fast, general = _both(t, key)
        except Exception as exc:  # noqa: BLE001 - both paths must refuse alike
            with pytest.raises(type(exc)):
                t[key]
            return
        np.testing.assert_array_equal(fast.values(), general)
        arrs = [k.arr for k in key]
        inside = all(a.min() >= 0 and a.max() < n for a, n in zip(arrs, t.shape))
        assert (fast.index is None) == inside  # in bounds: a strided view, no index grid
    finally:
        st.pop()


def test_tile_offsets_and_combined_axes(sim) -> None:
    host = np.arange(64 * 40, dtype=np.float32).reshape(64, 40)
    t = wrap_host(host)
    i_p = _tile(0, 1, 16, 0, 2)
    i_f = _tile(0, 1, 8, 1, 2)
    for key in [
        (IndexExpr(32 + i_p.arr), IndexExpr(8 + i_f.arr)),  # m * P + i_p, n * F + i_f
        (IndexExpr(2 * i_p.arr), IndexExpr(i_f.arr + i_p.arr)),  # a skewed (diagonal) walk
        (IndexExpr(i_p.arr[::-1].copy()), i_f),  # rows walked backwards
        (IndexExpr(3 + i_p.arr),),  # one index tile, the rest of the row whole
        (i_p, IndexExpr(np.arange(8))),  # a 1-D tile broadcast along the last axis
    ]:
        fast, general = _both(t, key)
        assert fast.index is None
        np.testing.assert_array_equal(fast.values(), general)


# --------------------------------------------------------------------------- separable masks

axis_pred = st_.tuples(st_.integers(0, 1), st_.integers(1, 6), st_.integers(-1, 7), st_.booleans())


@settings(max_examples=200, deadline=None)
@given(st_.lists(axis_pred, min_size=2, max_size=4), st_.sampled_from([None, True, False]))
def test_box_of_a_mask_kept_as_factors_is_the_box_of_the_whole_mask(preds, scalar) -> None:
    from cuda2nki.nkisim.legacy_isa import _box
    from cuda2nki.nkisim.tensor import Mask

    sizes = {0: 5, 1: 6}
    mask = None
    for axis, _n, bound, below in preds:
        i = _tile(0, 1, sizes[axis], axis, 2)
        m = (i < bound) if below else (i >= bound)
        mask = m if mask is None else mask & m
    if scalar is not None:
        mask = mask & scalar
    assert len(mask.factors) > 1
    whole = Mask(mask.arr)
    assert _box(mask, 2) == _box(whole, 2)
    assert _box(mask, 3) == _box(whole, 3)


def test_nki_arithmetic_keeps_the_affine_form() -> None:
    from cuda2nki.nkisim import language as nl

    def grid(e: IndexExpr) -> np.ndarray:
        first, strides = e.aff
        g = np.full(e.arr.shape, first, np.int64)
        for k, (s, n) in enumerate(zip(strides, e.arr.shape)):
            shp = [1] * e.arr.ndim
            shp[k] = n
            g = g + s * np.arange(n).reshape(shp)
        return g

    i_p, i_f = nl.arange(128)[:, None], nl.arange(512)[None, :]
    g0, g1 = nl.mgrid[0:64, 3:40:2]
    exprs = [i_p, i_f, 3 * 128 + i_p, i_f * 2 + 5, 7 - i_p, i_p * 512 + i_f, -i_f, i_p - i_f]
    exprs += [4 - (i_p + 2 * i_f), nl.arange(5, 50, 3)[None, :] * 2, g0 * 64 + g1, g1 - g0]
    for e in exprs:
        assert e.aff is not None and np.array_equal(grid(e), e.arr)
    # not affine, or not known to be: found from the values where needed
    assert (i_f // 2).aff is None and (i_p % 3).aff is None and i_f[None, :, 0:4].aff is None
