"""``nki.language`` helpers: movement, matmul/transpose, comparisons, selection, generation rules."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import dtypes as dt
from cuda2nki.nkisim import isa as nisa
from cuda2nki.nkisim import language as nl
from cuda2nki.nkisim import registers
from cuda2nki.nkisim import state as st
from cuda2nki.nkisim.tensor import wrap_host

RNG = np.random.default_rng(11)


@pytest.fixture(params=[False, True], ids=["current", "legacy"])
def gen(request):
    s = st.SimState(legacy=request.param)
    st.push(s)
    yield request.param
    st.pop()


@pytest.fixture
def cur():
    st.push(st.SimState())
    yield
    st.pop()


@pytest.fixture
def leg():
    st.push(st.SimState(legacy=True))
    yield
    st.pop()


def test_load_store_roundtrip_with_cast(gen):
    x = RNG.standard_normal((64, 10)).astype(np.float32)
    h = wrap_host(x)
    t = nl.load(h, dtype=nl.bfloat16)
    assert t.dtype == nl.bfloat16 and t.buffer is nl.sbuf
    out = wrap_host(np.zeros((64, 10), np.float32))
    nl.store(out, t)
    np.testing.assert_array_equal(out.values(), dt.convert(x, dt.bfloat16).astype(np.float32))


def test_load_transpose2d_and_transpose(gen):
    x = RNG.standard_normal((40, 100)).astype(np.float32)
    t = nl.load_transpose2d(wrap_host(x))
    np.testing.assert_array_equal(t.values(), x.T)
    tp = nl.transpose(t[0:100, 0:40])
    assert tp.buffer is nl.psum
    np.testing.assert_array_equal(tp.values(), x)


def test_matmul_transpose_x(gen):
    a = RNG.standard_normal((64, 32)).astype(np.float32)
    b = RNG.standard_normal((64, 48)).astype(np.float32)
    r = nl.matmul(nl.load(wrap_host(a)), nl.load(wrap_host(b)), transpose_x=True)
    assert r.buffer is nl.psum and r.dtype == nl.float32
    np.testing.assert_allclose(r.values(), a.T @ b, rtol=1e-5, atol=1e-5)


def test_matmul_without_transpose_legacy_inserts_a_transpose(leg):
    a = RNG.standard_normal((32, 64)).astype(np.float32)
    b = RNG.standard_normal((64, 48)).astype(np.float32)
    r = nl.matmul(nl.load(wrap_host(a)), nl.load(wrap_host(b)))
    np.testing.assert_allclose(r.values(), a @ b, rtol=1e-5, atol=1e-5)
    assert [i.op for i in st.current().trace[-2:]] == ["nc_transpose", "nc_matmul"]


def test_matmul_without_transpose_refused_in_current_api(cur):
    a = nl.zeros((32, 64), nl.float32)
    b = nl.zeros((64, 48), nl.float32)
    with pytest.raises(DiagnosticError) as ei:
        nl.matmul(a, b)
    assert ei.value.diagnostic.code == "C2N3021"


def test_comparison_default_dtypes(gen):
    x = nl.load(wrap_host(np.array([[1.0, 2.0, 3.0]], np.float32)))
    r = nl.greater(x, 1.5)
    assert r.dtype == (nl.bool_ if gen else nl.float32)
    np.testing.assert_array_equal(r.values(), [[0, 1, 1]])
    n = nl.logical_not(nl.greater(x, 1.5, dtype=nl.uint8))
    np.testing.assert_array_equal(n.values(), [[1, 0, 0]])


def test_where_dropout_and_bitwise(gen):
    x = nl.load(wrap_host(np.array([[1.0, -2.0, 3.0, -4.0]], np.float32)))
    c = nl.greater(x, 0.0, dtype=nl.float32)
    np.testing.assert_array_equal(nl.where(c, x, nl.negative(x)).values(), [[1, 2, 3, 4]])
    d = nl.dropout(nl.ones((128, 256), nl.float32), 0.5)
    assert 0.45 < (d.values() == 0).mean() < 0.55
    i = nl.load(wrap_host(np.array([[0b1100, 0b1010]], np.int32)))
    j = nl.load(wrap_host(np.array([[0b1010, 0b0110]], np.int32)))
    np.testing.assert_array_equal(nl.bitwise_xor(i, j).values(), [[0b0110, 0b1100]])
    np.testing.assert_array_equal(nl.right_shift(nl.invert(i), 28).values(), [[15, 15]])


def test_gather_flattened_and_broadcast_to(gen):
    x = RNG.standard_normal((4, 3, 5)).astype(np.float32)
    t = nl.load(wrap_host(x))
    idx = nl.load(wrap_host(np.array([[0, 14, 7]] * 4, np.uint32)))
    g = nl.gather_flattened(t, idx)
    np.testing.assert_array_equal(g.values(), x.reshape(4, 15)[:, [0, 14, 7]])
    row = nl.load(wrap_host(np.arange(6, dtype=np.float32).reshape(1, 6)))
    b = nl.broadcast_to(row, (128, 6))
    np.testing.assert_array_equal(b.values(), np.broadcast_to(np.arange(6), (128, 6)))


def test_reductions_stay_2d_and_var_mean(gen):
    x = RNG.standard_normal((16, 30)).astype(np.float32)
    t = nl.load(wrap_host(x))
    assert nl.sum(t, axis=1).shape == (16, 1)
    np.testing.assert_allclose(nl.var(t, axis=1).values()[:, 0], x.var(axis=1), rtol=1e-5)
    np.testing.assert_allclose(nl.mean(t, axis=[1]).values()[:, 0], x.mean(axis=1), rtol=1e-5)
    assert nl.all(nl.greater(t, -100.0), axis=1).values().all()


def test_shared_identity_and_tile_size(gen):
    eye = nl.shared_identity_matrix(8)
    np.testing.assert_array_equal(eye.values(), np.eye(8, dtype=np.uint8))
    assert nl.tile_size.pmax == 128 and nl.tile_size.psum_fmax == 512
    assert nl.tile_size.gemm_moving_fmax == 512 and nl.tile_size.total_available_sbuf_size == 212984


def test_operators_on_tiles(leg):
    x = nl.load(wrap_host(np.array([[1.0, 2.0]], np.float32)))
    y = (x * 2 + 1) / x - x**2
    np.testing.assert_allclose(y.values(), [[3 - 1, 2.5 - 4]])
    t = nl.zeros((1, 2), nl.float32)
    t[...] = x
    t += x
    np.testing.assert_array_equal(t.values(), [[2, 4]])


def test_fori_loop_and_ranges(cur):
    acc = nl.zeros((1, 1), nl.int32)
    cell = nl.zeros((1, 1), nl.int32)

    def body(i):  # i is a register, passed by value
        registers.register_store(cell, i)
        nisa.tensor_tensor(acc, acc, cell, nl.add)

    nl.fori_loop(0, 5, body)
    assert acc.values()[0, 0] == 10
    assert list(nl.affine_range(2, 8, 3)) == [2, 5]
    assert list(nl.sequential_range(3)) == [0, 1, 2]
