"""The allocation and slicing fast paths build the same objects as the general constructors."""

from __future__ import annotations

from cuda2nki.nkisim import dtypes as dt
from cuda2nki.nkisim import language as nl
from cuda2nki.nkisim import state as st
from cuda2nki.nkisim.tensor import NkiTensor, Storage, sbuf


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
