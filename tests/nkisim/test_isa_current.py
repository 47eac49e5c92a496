"""Current-API ``nisa`` instructions and tensor views, against NumPy references."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import dtypes as dt
from cuda2nki.nkisim import isa as nisa
from cuda2nki.nkisim import language as nl
from cuda2nki.nkisim import state as st
from cuda2nki.nkisim.profile import build_profile
from cuda2nki.nkisim.tensor import wrap_host


@pytest.fixture(autouse=True)
def sim_state():
    s = st.SimState()
    st.push(s)
    yield s
    st.pop()


def tile(values, dtype=None):
    v = np.asarray(values)
    d = dt.as_dtype(dtype) if dtype is not None else dt.from_numpy(v.dtype)
    t = nl.ndarray(v.shape, d)
    nisa.dma_copy(dst=t, src=wrap_host(v, d))
    return t


def empty(shape, dtype=nl.float32, buffer=nl.sbuf):
    return nl.ndarray(shape, dtype, buffer=buffer)


RNG = np.random.default_rng(7)


# --------------------------------------------------------------------------- views


def test_on_chip_integer_indexing_never_drops_below_2d():
    t = empty((64, 64, 64))
    assert t[0, 0, 10].shape == (1, 1)
    assert t[:, 0].shape == (64, 64)
    assert t[:, 0, 10].shape == (64, 1)
    assert t[0, ..., :].shape == (1, 64, 64)
    assert t[:, :, ::2].shape == (64, 64, 32)
    h = wrap_host(np.zeros((4, 128, 32), np.float32))
    assert h[0, :, :].shape == (128, 32)
    assert h[1, 2].shape == (32,)


def test_view_methods_alias_storage():
    x = RNG.standard_normal((8, 6, 4)).astype(np.float32)
    t = tile(x)
    np.testing.assert_array_equal(t.slice(1, 2, 6, 2).values(), x[:, 2:6:2])
    np.testing.assert_array_equal(t.select(2, 3).values(), x[:, :, 3])
    np.testing.assert_array_equal(t.permute((0, 2, 1)).values(), x.transpose(0, 2, 1))
    np.testing.assert_array_equal(t.reshape((8, 24)).values(), x.reshape(8, 24))
    np.testing.assert_array_equal(t.flatten_dims(1, 2).values(), x.reshape(8, 24))
    e = t.select(2, 0).expand_dim(2)
    assert e.shape == (8, 6, 1)
    assert e.broadcast(2, 5).shape == (8, 6, 5)
    assert e.squeeze_dim(2).shape == (8, 6)
    assert t.get_pattern() == [[24, 8], [4, 6], [1, 4]]
    assert t.is_contiguous() and not t.slice(2, 0, 2).is_contiguous()
    bits = t.view(nl.int32).values()
    np.testing.assert_array_equal(bits, x.view(np.int32))
    with pytest.raises(DiagnosticError):
        t.permute((1, 0, 2))  # partition dim must stay first on-chip


def test_ap_access_pattern_and_vector_offset_gather():
    x = np.arange(4 * 3 * 8, dtype=np.float32).reshape(4, 24)
    t = tile(x)
    v = t.ap([[24, 4], [1, 3], [3, 8]])  # view (4, 3, 8) -> transposed free blocks
    np.testing.assert_array_equal(v.values(), x.reshape(4, 8, 3).transpose(0, 2, 1))
    h = wrap_host(np.arange(10 * 5, dtype=np.float32).reshape(10, 5))
    rows = tile(np.array([[7], [2], [9]], np.int32))
    g = h.ap([[5, 3], [1, 5]], offset=0, vector_offset=rows)
    dst = empty((3, 5))
    nisa.dma_copy(dst=dst, src=g)
    np.testing.assert_array_equal(dst.values(), np.arange(50).reshape(10, 5)[[7, 2, 9]])


def test_ap_out_of_range_is_diagnosed():
    t = empty((4, 8))
    with pytest.raises(DiagnosticError) as ei:
        t.ap([[8, 4], [1, 9]])
    assert ei.value.diagnostic.code == "C2N3019"


# --------------------------------------------------------------------------- movement


def test_dma_transpose_and_dma_compute_scatter_add():
    x = RNG.standard_normal((16, 32)).astype(np.float32)
    d = empty((32, 16))
    nisa.dma_transpose(dst=d, src=wrap_host(x))
    np.testing.assert_array_equal(d.values(), x.T)
    table = wrap_host(np.zeros((6, 4), np.float32))
    idx = tile(np.array([[1], [4], [1]], np.int32))
    src = tile(np.ones((3, 4), np.float32))
    view = table.ap([[4, 3], [1, 4]], offset=0, vector_offset=idx)
    nisa.dma_compute(view, [view, src], nl.add, unique_indices=False)
    want = np.zeros((6, 4), np.float32)
    want[1] += 2
    want[4] += 1
    np.testing.assert_array_equal(table.values(), want)


def test_tensor_copy_casts_and_predicated_copy():
    x = RNG.standard_normal((16, 8)).astype(np.float32)
    t = tile(x)
    b = empty((16, 8), nl.bfloat16)
    nisa.tensor_copy(dst=b, src=t)
    np.testing.assert_array_equal(b.values(), x.astype(ml_dtypes.bfloat16))
    pred = tile((x > 0).astype(np.uint8))
    d = tile(np.zeros((16, 8), np.float32))
    nisa.tensor_copy_predicated(dst=d, src=t, predicate=pred)
    np.testing.assert_array_equal(d.values(), np.where(x > 0, x, 0))


def test_iota_pattern():
    d = empty((4, 6), nl.int32)
    nisa.iota(d, [[2, 3], [1, 2]], offset=5, channel_multiplier=100)
    p = np.arange(4)[:, None, None] * 100
    want = 5 + p + (np.arange(3) * 2)[None, :, None] + np.arange(2)[None, None, :]
    np.testing.assert_array_equal(d.values(), want.reshape(4, 6))


# --------------------------------------------------------------------------- tensor engine


def test_nc_matmul_bf16_and_transposes():
    a = RNG.standard_normal((128, 64)).astype(np.float32)
    b = RNG.standard_normal((128, 200)).astype(np.float32)
    acc = empty((64, 200), buffer=nl.psum)
    nisa.nc_matmul(acc, tile(a, "bfloat16"), tile(b, "bfloat16"))
    ab, bb = (x.astype(ml_dtypes.bfloat16).astype(np.float32) for x in (a, b))
    np.testing.assert_allclose(acc.values(), ab.T @ bb, rtol=1e-5, atol=1e-4)
    x = RNG.standard_normal((100, 30)).astype(np.float32)
    tp = empty((30, 100), buffer=nl.psum)
    nisa.nc_transpose(tp, tile(x))
    np.testing.assert_array_equal(tp.values(), x.T)
    small = RNG.standard_normal((20, 32)).astype(np.float32)
    tv = empty((32, 20))
    nisa.nc_transpose(tv, tile(small), engine=nisa.engine.vector)
    np.testing.assert_array_equal(tv.values(), small.T)


def test_double_row_fp8_matmul():
    st_ = RNG.standard_normal((128, 2, 16)).astype(np.float32)
    mv = RNG.standard_normal((128, 2, 32)).astype(np.float32)
    acc = empty((16, 32), buffer=nl.psum)
    nisa.nc_matmul(
        acc,
        tile(st_, "float8_e4m3"),
        tile(mv, "float8_e4m3"),
        perf_mode=nisa.matmul_perf_mode.double_row,
    )
    s8, m8 = (dt.convert(v, dt.float8_e4m3).astype(np.float32) for v in (st_, mv))
    np.testing.assert_allclose(acc.values(), np.einsum("kli,klj->ij", s8, m8), rtol=1e-5, atol=1e-4)


# --------------------------------------------------------------------------- vector/scalar


def test_activation_scale_bias_and_reduce(sim_state):
    x = RNG.standard_normal((32, 50)).astype(np.float32)
    bias = RNG.standard_normal((32, 1)).astype(np.float32)
    d = empty((32, 50))
    s = empty((32, 1))
    nisa.activation(
        dst=d,
        op=nl.exp,
        data=tile(x),
        bias=tile(bias),
        scale=0.5,
        reduce_op=nl.add,
        reduce_res=s,
        reduce_cmd=nisa.reduce_cmd.reset_reduce,
    )
    want = np.exp(0.5 * x + bias)
    np.testing.assert_allclose(d.values(), want, rtol=1e-6)
    np.testing.assert_allclose(s.values(), want.sum(axis=1, keepdims=True), rtol=1e-5)
    s2 = empty((32, 1))
    nisa.activation_reduce(dst=d, op=nl.square, data=tile(x), reduce_op=nl.add, reduce_res=s2)
    np.testing.assert_allclose(s2.values(), (x * x).sum(axis=1, keepdims=True), rtol=1e-5)


def test_tensor_scalar_two_ops_reverse_and_bitvec():
    x = RNG.standard_normal((8, 5)).astype(np.float32)
    col = RNG.standard_normal((8, 1)).astype(np.float32)
    d = empty((8, 5))
    nisa.tensor_scalar(
        d, tile(x), nl.subtract, tile(col), reverse0=True, op1=nl.multiply, operand1=3.0
    )
    np.testing.assert_allclose(d.values(), (col - x) * 3.0, rtol=1e-6)
    i = tile(np.arange(40, dtype=np.int32).reshape(8, 5))
    di = empty((8, 5), nl.int32)
    nisa.tensor_scalar(di, i, nl.left_shift, 2, op1=nl.bitwise_and, operand1=0x3C)
    np.testing.assert_array_equal(di.values(), (np.arange(40).reshape(8, 5) << 2) & 0x3C)


def test_scalar_tensor_tensor_and_reciprocal():
    x, y = RNG.uniform(1, 2, (2, 16, 9)).astype(np.float32)
    d = empty((16, 9))
    nisa.scalar_tensor_tensor(
        dst=d, data=tile(x), op0=nl.multiply, operand0=2.0, op1=nl.add, operand1=tile(y)
    )
    np.testing.assert_allclose(d.values(), 2 * x + y, rtol=1e-6)
    r = empty((16, 9))
    nisa.reciprocal(r, tile(x))
    np.testing.assert_allclose(r.values(), 1 / x, rtol=1e-6)


def test_scans_and_cumulative():
    a = RNG.uniform(0.5, 1.0, (4, 20)).astype(np.float32)
    b = RNG.standard_normal((4, 20)).astype(np.float32)
    d = empty((4, 20))
    nisa.tensor_tensor_scan(d, tile(a), tile(b), 0.0, nl.multiply, nl.add)
    want = np.zeros_like(a)
    r = np.zeros(4, np.float32)
    for i in range(20):
        r = a[:, i] * r + b[:, i]
        want[:, i] = r
    np.testing.assert_allclose(d.values(), want, rtol=1e-5, atol=1e-6)
    c = empty((4, 20))
    nisa.tensor_scalar_cumulative(c, tile(b), nl.add, nl.add, 0.0)
    np.testing.assert_allclose(c.values(), np.cumsum(b, axis=1), rtol=1e-5, atol=1e-5)


def test_reductions_partition_and_scalar_reduce():
    x = RNG.standard_normal((16, 12)).astype(np.float32)
    pr = empty((1, 12))
    nisa.tensor_partition_reduce(pr, nl.add, tile(x))
    np.testing.assert_allclose(pr.values(), x.sum(axis=0, keepdims=True), rtol=1e-5)
    d = empty((16, 12))
    res = empty((16, 1))
    nisa.tensor_scalar_reduce(
        dst=d, data=tile(x), op0=nl.multiply, operand0=2.0, reduce_op=nl.maximum, reduce_res=res
    )
    np.testing.assert_allclose(res.values(), 2 * x.max(axis=1, keepdims=True))


def test_bn_stats_aggr_match_mean_var():
    x = RNG.standard_normal((32, 1000)).astype(np.float32)
    t = tile(x)
    stats = empty((32, 12))
    nisa.bn_stats(stats[:, 0:6], t[:, 0:500])
    nisa.bn_stats(stats[:, 6:12], t[:, 500:1000])
    mv = empty((32, 2))
    nisa.bn_aggr(mv, stats)
    np.testing.assert_allclose(mv.values()[:, 0], x.mean(axis=1), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(mv.values()[:, 1], x.var(axis=1), rtol=1e-4)


def test_selects():
    x = RNG.standard_normal((8, 10)).astype(np.float32)
    d = empty((8, 10))
    nisa.affine_select(d, [[-1, 10]], 1, tile(x), -9984.0, cmp_op=nl.greater)
    p = np.arange(8)[:, None]
    f = np.arange(10)[None, :]
    np.testing.assert_array_equal(d.values(), np.where(p - f > 0, x, -9984.0))
    r = empty((8, 10))
    m = empty((8, 1))
    nisa.range_select(r, tile(x), nl.greater_equal, nl.less, 2.0, 6.0, reduce_res=m)
    want = np.where((f >= 2) & (f < 6), x, np.float32(-3.4028235e38))
    np.testing.assert_array_equal(r.values(), want)
    np.testing.assert_array_equal(m.values(), want.max(axis=1, keepdims=True))
    s = empty((8, 10))
    nisa.select_reduce(s, tile((x > 0).astype(np.uint8)), tile(x), 0.0)
    np.testing.assert_array_equal(s.values(), np.where(x > 0, x, 0))


def test_max8_find_index8_match_replace8():
    x = RNG.permutation(64).astype(np.float32).reshape(2, 32)
    m = empty((2, 8))
    nisa.max8(m, tile(x))
    want = -np.sort(-x, axis=1)[:, :8]
    np.testing.assert_array_equal(m.values(), want)
    idx = empty((2, 8), nl.uint32)
    nisa.nc_find_index8(idx, tile(x), m)
    np.testing.assert_array_equal(idx.values(), np.argsort(-x, axis=1)[:, :8])
    rep = empty((2, 32))
    nisa.nc_match_replace8(rep, tile(x), m, -1.0)
    assert (rep.values() == -1).sum() == 16


def test_gathers_and_shuffle():
    x = RNG.standard_normal((4, 10)).astype(np.float32)
    ind = RNG.integers(0, 10, (4, 6)).astype(np.uint32)
    d = empty((4, 6))
    nisa.nc_n_gather(d, tile(x), tile(ind))
    np.testing.assert_array_equal(d.values(), np.take_along_axis(x, ind.astype(np.int64), 1))
    y = RNG.standard_normal((32, 3)).astype(np.float32)
    sh = empty((32, 3))
    mask = list(range(31, -1, -1))
    nisa.nc_stream_shuffle(sh, tile(y), mask)
    np.testing.assert_array_equal(sh.values(), y[::-1])


def test_random_family_is_statistically_sane():
    x = tile(np.ones((128, 512), np.float32))
    d = empty((128, 512))
    nisa.dropout(d, x, 0.25)
    kept = (d.values() != 0).mean()
    assert 0.73 < kept < 0.77 and set(np.unique(d.values())) <= {0.0, 1.0}
    u = empty((128, 512))
    nisa.rand2(u, 2.0, 3.0)
    v = u.values()
    assert v.min() >= 2.0 and v.max() < 3.0 and abs(v.mean() - 2.5) < 0.01
    r = nl.rand((128, 512))
    assert abs(r.values().mean() - 0.5) < 0.01


# --------------------------------------------------------------------------- profile figures


def test_profile_figures_pinned(sim_state):
    a = tile(np.ones((128, 512), np.float32), "bfloat16")
    b = tile(np.ones((128, 128), np.float32), "bfloat16")
    acc = empty((128, 512), buffer=nl.psum)
    nisa.nc_matmul(acc, b, a)
    out = empty((128, 512))
    nisa.tensor_copy(dst=out, src=acc)
    e = empty((128, 512))
    nisa.activation(dst=e, op=nl.exp, data=out)
    p = build_profile(sim_state.trace, sim_state)
    assert p.instructions == {"dma": 2, "tensor": 1, "vector": 1, "scalar": 1}
    assert p.cycles == {"tensor": 512.0, "vector": 512.0, "scalar": 512.0}
    assert p.dma_bytes == (128 * 512 + 128 * 128) * 2
    assert p.dma_avg_bytes_per_partition == pytest.approx((128 * 512 + 128 * 128) * 2 / 256)
    # trn2 clocks: TensorE 2.4 GHz, VectorE 0.96, ScalarE 1.2; DMA 600 ns + bytes / (16 x 23 B/ns)
    assert p.time_ns["tensor"] == pytest.approx(512 / 2.4)
    assert p.time_ns["vector"] == pytest.approx(512 / 0.96)
    assert p.time_ns["dma"] == pytest.approx(2 * 600 + (131072 + 32768) / (16 * 23))
    assert p.bottleneck == "dma" and p.overlapped_ns == pytest.approx(p.time_ns["dma"])
    assert p.serialised_ns == pytest.approx(sum(p.time_ns.values()))
    assert p.pe_fill == 1.0 and p.partition_utilisation == 1.0
    assert p.matmul_flops == 2 * 128 * 128 * 512
    assert p.peak_psum_banks == 1 and p.peak_psum_bytes_per_partition == 2048
    # a and b are dead after the matmul, before out and e are allocated
    assert p.peak_sbuf_bytes_per_partition == 2048 + 2048


def test_profile_fp32_matmul_costs_four_times(sim_state):
    s = tile(np.ones((64, 32), np.float32))
    m = tile(np.ones((64, 100), np.float32))
    acc = empty((32, 100), buffer=nl.psum)
    nisa.nc_matmul(acc, s, m)
    p = build_profile(sim_state.trace, sim_state)
    assert p.cycles["tensor"] == 4 * max(min(64, 32), 100)
    assert p.pe_fill == pytest.approx(0.5 * 0.25)
    assert p.partition_utilisation == pytest.approx(64 / 128)
    assert "bottleneck" in p.to_text() and p.to_dict()["instructions"]["tensor"] == 1


def test_local_gather_within_groups_of_16():
    x = np.arange(32 * 4, dtype=np.float32).reshape(32, 4)
    idx = np.zeros((32, 1), np.uint16)
    idx[:16, 0] = np.arange(16)[::-1] * 4  # group 0: row r takes the first element of row 15-r
    idx[16:, 0] = np.arange(16) * 4 + 1  # group 1: row r takes the second element of row r
    d = empty((32, 1))
    nisa.local_gather(d, tile(x), tile(idx, "uint16"))
    want = np.concatenate([x[:16][::-1, 0], x[16:, 1]])[:, None]
    np.testing.assert_array_equal(d.values(), want)
    with pytest.raises(DiagnosticError):
        bad = tile(np.full((32, 1), 64, np.uint16), "uint16")
        nisa.local_gather(d, tile(x), bad)
