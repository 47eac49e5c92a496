"""Fast paths: allocation and slicing build the same objects as the general constructors, and
deferred DMA loads read as the loaded values wherever the tile is touched."""

from __future__ import annotations

import numpy as np

from cuda2nki.nkisim import dtypes as dt
from cuda2nki.nkisim import isa as nisa
from cuda2nki.nkisim import language as nl
from cuda2nki.nkisim import simulate_kernel
from cuda2nki.nkisim import state as st
from cuda2nki.nkisim.tensor import NkiTensor, Storage, sbuf, wrap_host


def _slots(cls: type) -> list[str]:
    return [n for n in cls.__slots__ if n != "__weakref__"]


def _fields(obj, cls: type) -> dict:
    return {n: getattr(obj, n) for n in _slots(cls)}


def test_sbuf_tile_storage_sets_every_field_as_init_does() -> None:
    state = st.SimState()
    st.push(state)
    try:
        t = nl.ndarray((2, 3), dtype=nl.float32, buffer=nl.sbuf, name="x")
        stg = t.storage
        ref = Storage(stg.flat, dt.float32, sbuf, (2, 3), 0, "x", stg.site, True)
        got, want = _fields(stg, Storage), _fields(ref, Storage)
        assert got.pop("uid") != want.pop("uid")
        assert got.pop("_free") == state.free_sbuf and want.pop("_free") is None
        assert got.pop("use") == [-1] and want.pop("use") is None
        assert got == want
    finally:
        st.pop()


def test_sbuf_tile_and_slices_match_the_constructor() -> None:
    state = st.SimState()
    st.push(state)
    try:
        t = nl.ndarray((4, 6), dtype=nl.float32, buffer=nl.sbuf)
        for v in (t, t[1:3, 2:5], t[0:4, 0:6], t[:, 1:]):
            ref = NkiTensor(v.storage, v._a, v.dtype, v.pdim, None, v._boff)
            assert _fields(v, NkiTensor) == _fields(ref, NkiTensor) | {"_a": v._a}
            assert type(v.shape) is tuple and v.shape == v._a.shape
        assert t[0:4, 0:6] is t
        assert t[1:3, 2:5].offset == 1 * 6 + 2
    finally:
        st.pop()


def test_allocation_sites_are_shared_per_instruction() -> None:
    state = st.SimState()
    st.push(state)
    try:
        tiles = [nl.ndarray((2, 2), dtype=nl.float32, buffer=nl.sbuf) for _ in range(3)]
        sites = {id(t.storage.site) for t in tiles}
        assert len(sites) == 1
        assert tiles[0].storage.site[0] == __file__
    finally:
        st.pop()


# --------------------------------------------------------------------------- deferred DMA loads
# A DMA load from a caller's array into a new SBUF tile is deferred until the tile is read or
# partly overwritten; every way of touching the tile must see the loaded values.


def _run(kernel, *arrays):
    return np.asarray(simulate_kernel(kernel, list(arrays)).outputs)


def _load(src, rows=4, cols=6):
    t = nl.ndarray((rows, cols), dtype=src.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=src[0:rows, 0:cols])
    return t


def _store(t, shape):
    out = nl.ndarray(shape, dtype=t.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


def k_add(a, b):
    x, y = _load(a), _load(b)
    z = nl.ndarray((4, 6), dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=z, data1=x, data2=y, op=nl.add)
    return _store(z, (4, 6))


def k_add_in_place(a, b):
    x, y = _load(a), _load(b)
    nisa.tensor_tensor(dst=x, data1=x, data2=y, op=nl.add)
    return _store(x, (4, 6))


def k_read_part(a, b):
    x = _load(a)
    part = nl.ndarray((2, 3), dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=part, src=x[0:2, 1:4])
    return _store(part, (2, 3))


def k_partial_overwrite(a, b):
    x = _load(a)
    nisa.memset(dst=x[0:4, 0:2], value=7.0)
    return _store(x, (4, 6))


def k_write_source_after_load(a, b):
    x = _load(a)
    y = _load(b)
    nisa.dma_copy(dst=a[0:4, 0:6], src=y)  # the input changes after the load
    z = nl.ndarray((4, 6), dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=z, data1=x, data2=x, op=nl.add)
    return _store(z, (4, 6))


def k_store_loaded(a, b):
    return _store(_load(a), (4, 6))


def k_reload(a, b):
    x = _load(a)
    nisa.dma_copy(dst=x, src=b[0:4, 0:6])  # a second whole load before any read
    return _store(x, (4, 6))


def k_shuffle(a, b):
    x = _load(a, 32, 6)
    y = _load(b, 32, 6)
    nisa.nc_stream_shuffle(dst=x, src=y, shuffle_mask=[255] * 16 + list(range(16)))
    return _store(x, (32, 6))


def test_deferred_loads_read_the_loaded_values() -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((32, 8), dtype=np.float32)
    b = rng.standard_normal((32, 8), dtype=np.float32)
    x, y = a[:4, :6], b[:4, :6]
    np.testing.assert_array_equal(_run(k_add, a, b), x + y)
    np.testing.assert_array_equal(_run(k_add_in_place, a, b), x + y)
    np.testing.assert_array_equal(_run(k_read_part, a, b), x[0:2, 1:4])
    want = x.copy()
    want[:, 0:2] = 7.0
    np.testing.assert_array_equal(_run(k_partial_overwrite, a, b), want)
    np.testing.assert_array_equal(_run(k_write_source_after_load, a.copy(), b), x + x)
    np.testing.assert_array_equal(_run(k_store_loaded, a, b), x)
    np.testing.assert_array_equal(_run(k_reload, a, b), y)
    want = a[:32, :6].copy()
    want[16:32] = b[:16, :6]
    want[0:16] = a[0:16, :6]
    got = _run(k_shuffle, a, b)
    np.testing.assert_array_equal(got[16:32], b[:16, :6])
    np.testing.assert_array_equal(got[0:16], a[0:16, :6])


def test_load_is_deferred_until_read() -> None:
    state = st.SimState()
    st.push(state)
    try:
        src = wrap_host(np.arange(24, dtype=np.float32).reshape(4, 6))
        t = _load(src)
        assert t.storage.fresh and t.storage.lazy is not None  # not copied yet
        np.testing.assert_array_equal(t.values(), np.arange(24).reshape(4, 6))
        assert not t.storage.fresh and t.storage.lazy is None
    finally:
        st.pop()


def test_whole_view_of_a_rebased_input_reads_the_written_copy() -> None:
    state = st.SimState()
    st.push(state)
    try:
        host = np.zeros((4, 6), np.float32)
        a = wrap_host(host)
        view = a[0:4, 0:6]
        a.assign(np.ones((4, 6), np.float32))  # copy-on-write: the storage moves to a copy
        for v in (view[0:4, 0:6], view[1:3, 2:5], view[:, :]):
            assert (v.values() == 1).all()
        assert (host == 0).all()
    finally:
        st.pop()


def test_bf16_widening_is_exact_on_every_bit_pattern() -> None:
    import ml_dtypes

    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(ml_dtypes.bfloat16)
    for v in (every, every.reshape(256, 256)[:, ::3], every.reshape(256, 256).T):
        want = v.astype(np.float32).view(np.uint32)
        got = dt.bf16_to_f32(v)
        assert got.dtype == np.float32 and got.shape == v.shape
        assert np.array_equal(got.view(np.uint32), want)
