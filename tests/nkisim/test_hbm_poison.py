"""Lazily poisoned HBM outputs: exactly the elements never written read as poison."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from cuda2nki.nkisim import dtypes as dt
from cuda2nki.nkisim import isa as nisa
from cuda2nki.nkisim import language as nl
from cuda2nki.nkisim import state as st
from cuda2nki.nkisim.tensor import WrittenBoxes, wrap_host


@pytest.fixture
def fresh_state():
    s = st.SimState()
    st.push(s)
    yield s
    st.pop()


def _index(draw, n: int):
    """A basic index on a dimension of size ``n``: a slice (maybe stepped) or an integer."""
    kind = draw(hs.sampled_from(["slice", "slice", "step", "int"]))
    if kind == "int":
        return draw(hs.integers(0, n - 1))
    a = draw(hs.integers(0, n - 1))
    b = draw(hs.integers(a + 1, n))
    step = draw(hs.integers(2, 3)) if kind == "step" else None
    return slice(a, b, step)


@hs.composite
def writes(draw):
    shape = tuple(draw(hs.lists(hs.integers(1, 7), min_size=1, max_size=3)))
    keys = []
    for _ in range(draw(hs.integers(0, 6))):
        keys.append(tuple(_index(draw, n) for n in shape))
    dtype = draw(hs.sampled_from(["float32", "bfloat16"]))
    return shape, keys, dtype


@settings(max_examples=120, deadline=None)
@given(writes())
def test_unwritten_elements_read_as_poison(case):
    shape, keys, dtype = case
    s = st.SimState()
    st.push(s)
    try:
        out = nl.ndarray(shape, dtype=getattr(nl, dtype), buffer=nl.shared_hbm)
        expect = np.zeros(shape, dtype=bool)
        for key in keys:
            view = out[key]
            src = wrap_host(np.ones(view.shape, np.float32))  # fp32 -> bf16 takes the slow path
            nisa.dma_copy(dst=view, src=src)
            expect[key] = True
        got = out.values().astype(np.float32)
        np.testing.assert_array_equal(np.isnan(got), ~expect)
        assert (got[expect] == 1).all()
    finally:
        st.pop()


def test_tiled_output_with_missing_tile_is_poisoned_there(fresh_state):
    out = nl.ndarray((256, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
    ones = wrap_host(np.ones((128, 512), np.float32))
    for m in range(0, 256, 128):
        for n in range(0, 1024, 512):
            if (m, n) != (128, 512):
                nisa.dma_copy(dst=out[m : m + 128, n : n + 512], src=ones)
    assert type(out.storage.pending) is WrittenBoxes  # tile writes stayed boxes
    v = out.values()
    assert np.isnan(v[128:, 512:]).all()
    assert (v[:128] == 1).all() and (v[128:, :512] == 1).all()
    assert v[128, 512].view(np.uint32) == dt.CANARY_BITS


def test_permuted_write_falls_back_to_element_marks(fresh_state):
    out = nl.ndarray((4, 6), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out[0:2, :], src=wrap_host(np.zeros((2, 6), np.float32)))
    view = out[0:4, 2:5].permute((1, 0))  # (3, 4), not a box of out's index space
    vals = np.arange(12, dtype=np.float32).reshape(3, 4)
    nisa.dma_copy(dst=view, src=wrap_host(vals))
    assert type(out.storage.pending) is np.ndarray
    v = out.values()
    np.testing.assert_array_equal(v[:, 2:5], vals.T)
    assert (v[0:2, [0, 1, 5]] == 0).all()
    assert np.isnan(v[2:, [0, 1, 5]]).all()


def test_boxes_record_only_boxes():
    wb = WrittenBoxes((4, 6), 4)
    base = np.zeros((4, 6), np.float32)
    assert wb.add(base[1:3, 2:5], (1 * 6 + 2) * 4)
    assert wb.add(base[2, 1:4], (2 * 6 + 1) * 4)  # a row of a 2-D tensor
    assert not wb.add(base[:, ::2], 0)  # stepped
    assert not wb.add(base.T[0:2, 0:2], 0)  # permuted
    assert wb.boxes == [((1, 2), (3, 5)), ((2, 1), (3, 4))]
    holes = wb.holes()
    mask = np.zeros((4, 6), bool)
    for h in holes:
        mask[h] = True
    np.testing.assert_array_equal(~mask, wb.materialize(24).reshape(4, 6))


def test_many_small_writes_switch_to_element_marks(fresh_state, monkeypatch):
    monkeypatch.setattr(WrittenBoxes, "MAX_BOXES", 4)
    out = nl.ndarray((8, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    one = wrap_host(np.ones((1, 1), np.float32))
    for i in range(6):
        nisa.dma_copy(dst=out[i : i + 1, i : i + 1], src=one)
    assert type(out.storage.pending) is np.ndarray
    v = out.values()
    np.testing.assert_array_equal(~np.isnan(v), np.eye(8, dtype=bool) & (np.arange(8) < 6))
