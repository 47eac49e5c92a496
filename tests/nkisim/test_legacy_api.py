"""Legacy (``neuronxcc.nki``, beta 1) API semantics."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.nkisim import load_kernel, load_module, simulate_kernel

LEG = "from neuronxcc import nki\nimport neuronxcc.nki.language as nl\nimport neuronxcc.nki.isa as nisa\nimport numpy as np\n"


def kern(tmp_path, body: str, name: str | None = None):
    p = tmp_path / "port.py"
    p.write_text(LEG + textwrap.dedent(body))
    return load_kernel(p, name)


def test_arange_strided_indexing_even_odd_columns(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(a):
            even = nl.ndarray((128, 256), a.dtype, buffer=nl.shared_hbm)
            odd = nl.ndarray((128, 256), a.dtype, buffer=nl.shared_hbm)
            i_p = nl.arange(128)[:, None]
            i_f = nl.arange(256)[None, :]
            t = nl.load(a)
            nl.store(even, value=nl.copy(t[i_p, 2 * i_f]))
            nl.store(odd, value=nl.copy(t[i_p, 2 * i_f + 1]))
            return even, odd
    """,
    )
    a = np.arange(128 * 512, dtype=np.float32).reshape(128, 512)
    e, o = simulate_kernel(k, [a]).outputs
    np.testing.assert_array_equal(e, a[:, 0::2])
    np.testing.assert_array_equal(o, a[:, 1::2])


def test_mgrid_transpose_of_free_blocks(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(a):
            P, X, Y = 5, 3, 4
            out = nl.ndarray((P, X * Y), a.dtype, buffer=nl.shared_hbm)
            ix, iy, iz = nl.mgrid[0:P, 0:X, 0:Y]
            t = nl.load(a)
            u = nl.ndarray((P, X * Y), a.dtype, buffer=nl.sbuf)
            u[ix, iz * X + iy] = nl.copy(t[ix, iy * Y + iz])
            nl.store(out, value=u)
            return out
    """,
    )
    a = np.arange(60, dtype=np.int8).reshape(5, 12)
    got = simulate_kernel(k, [a]).outputs
    np.testing.assert_array_equal(got, a.reshape(5, 3, 4).transpose(0, 2, 1).reshape(5, 12))


def test_masked_tails_load_and_store(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(a):
            M, N = a.shape
            out = nl.ndarray((M, N), a.dtype, buffer=nl.shared_hbm)
            i_p = nl.arange(128)[:, None]
            i_f = nl.arange(N)[None, :]
            for m in nl.affine_range((M + 127) // 128):
                rows = m * 128 + i_p
                t = nl.load(a[rows, i_f], mask=(rows < M))
                nl.store(out[rows, i_f], value=nl.exp(t, mask=(rows < M)), mask=(rows < M))
            return out
    """,
    )
    a = np.random.default_rng(0).standard_normal((200, 7)).astype(np.float32)
    res = simulate_kernel(k, [a])
    np.testing.assert_allclose(res.outputs, np.exp(a), rtol=1e-6)
    dma = [i for i in res.trace if i.engine == "dma"]
    assert sum(i.dma_bytes for i in dma) == 2 * 200 * 7 * 4
    assert [i.partitions for i in dma] == [128, 128, 72, 72]


def test_spmd_grid_program_ids(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
            i, j = nl.program_id(0), nl.program_id(1)
            rows = slice(i * 64, (i + 1) * 64)
            cols = slice(j * 8, (j + 1) * 8)
            t = nl.load(a[rows, cols])
            nl.store(out[rows, cols], value=nl.add(t, i * 10 + j + nl.num_programs(1) * 0))
            return out
    """,
    )
    a = np.zeros((128, 24), np.float32)
    got = simulate_kernel(k, [a], grid=(2, 3)).outputs
    want = np.zeros_like(a)
    for i in range(2):
        for j in range(3):
            want[i * 64 : (i + 1) * 64, j * 8 : (j + 1) * 8] = i * 10 + j
    np.testing.assert_array_equal(got, want)
    mod = load_module(tmp_path / "port.py")
    np.testing.assert_array_equal(mod.nki.simulate_kernel(mod.k[2, 3], a), want)


def test_psum_accumulation_operator(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(lhsT, rhs):
            K, M = lhsT.shape
            out = nl.ndarray((M, rhs.shape[1]), nl.float32, buffer=nl.shared_hbm)
            acc = nl.zeros((M, rhs.shape[1]), nl.float32, buffer=nl.psum)
            for kk in nl.affine_range(K // 128):
                a = nl.load(lhsT[kk * 128:(kk + 1) * 128, :])
                b = nl.load(rhs[kk * 128:(kk + 1) * 128, :])
                acc += nl.matmul(a, b, transpose_x=True)
            nl.store(out, value=nl.copy(acc))
            return out
    """,
    )
    rng = np.random.default_rng(2)
    a = rng.standard_normal((384, 64)).astype(np.float32)
    b = rng.standard_normal((384, 100)).astype(np.float32)
    res = simulate_kernel(k, {"lhsT": a, "rhs": b})
    np.testing.assert_allclose(res.outputs, a.T @ b, rtol=1e-4, atol=1e-4)
    assert sum(i.op == "nc_matmul" for i in res.trace) == 3


def test_isa_calls_return_results_with_dtype(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit(mode="simulation")
        def k(a):
            out = nl.ndarray(a.shape, nl.bfloat16, buffer=nl.shared_hbm)
            t = nl.load(a)
            y = nisa.activation(op=np.square, data=t, bias=None, scale=2.0, dtype=nl.bfloat16)
            z = nisa.tensor_scalar(y, np.subtract, 1.0, reverse0=True)
            nl.store(out, value=z)
            return out
    """,
    )
    a = np.linspace(-1, 1, 128 * 4, dtype=np.float32).reshape(128, 4)
    got = simulate_kernel(k, [a]).outputs
    y = np.square(2 * a).astype(np.float32)
    import ml_dtypes

    want = (1 - y.astype(ml_dtypes.bfloat16).astype(np.float32)).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(got, want)


def test_legacy_type_promotion(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(a, b):
            o1 = nl.ndarray(a.shape, nl.float32, buffer=nl.shared_hbm)
            o2 = nl.ndarray(b.shape, nl.int16, buffer=nl.shared_hbm)
            x = nl.add(nl.load(a), 1.2)
            assert x.dtype == nl.float32, x.dtype
            y = nl.add(nl.load(b), nl.load(b).__class__ and nl.ones(b.shape, nl.uint8))
            assert y.dtype == nl.int16, y.dtype
            nl.store(o1, value=x)
            nl.store(o2, value=y)
            return o1, o2
    """,
    )
    a = np.ones((128, 2), np.float16)
    b = np.full((128, 2), -3, np.int8)
    o1, o2 = simulate_kernel(k, [a, b]).outputs
    np.testing.assert_allclose(o1, 2.2, rtol=1e-6)
    np.testing.assert_array_equal(o2, -2)


def test_block_dims_with_par_dim(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
            buf = nl.ndarray((2, nl.par_dim(128), 8), dtype=a.dtype, buffer=nl.sbuf)
            for b in nl.affine_range(2):
                buf[b] = nl.load(a[b * 128:(b + 1) * 128, :])
            for b in nl.affine_range(2):
                nl.store(out[b * 128:(b + 1) * 128, :], value=nl.multiply(buf[b], 3.0))
            return out
    """,
    )
    a = np.arange(256 * 8, dtype=np.float32).reshape(256, 8)
    res = simulate_kernel(k, [a], profile=True)
    np.testing.assert_array_equal(res.outputs, 3 * a)
    assert res.profile.peak_sbuf_bytes_per_partition >= 2 * 8 * 4


def test_indirect_row_gather(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(data, idx):
            out = nl.ndarray((64, data.shape[1]), data.dtype, buffer=nl.shared_hbm)
            i_p = nl.arange(64)[:, None]
            i_f = nl.arange(data.shape[1])[None, :]
            ix = nl.load(idx)
            rows = nl.load(data[ix[i_p, 0], i_f])
            nl.store(out, value=rows)
            return out
    """,
    )
    data = np.random.default_rng(3).standard_normal((300, 16)).astype(np.float32)
    idx = np.random.default_rng(4).integers(0, 300, (64, 1)).astype(np.int32)
    np.testing.assert_array_equal(simulate_kernel(k, [data, idx]).outputs, data[idx[:, 0]])


def test_static_cast_and_baremetal(tmp_path):
    p = tmp_path / "port.py"
    p.write_text(
        LEG
        + textwrap.dedent("""
        @nki.jit
        def k(a):
            out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
            nl.store(out, value=nl.load(a))
            return out
    """)
    )
    mod = load_module(p)
    x = mod.nl.static_cast(np.array([1.0 + 2**-9], np.float32), np.float32)
    assert x.dtype == np.float32
    bf = mod.nl.static_cast(np.array([1.0 + 2**-9, 3.0], np.float32), mod.nl.bfloat16)
    np.testing.assert_array_equal(bf.astype(np.float32), [1.0, 3.0])
    a = np.ones((4, 4), np.float32)
    np.testing.assert_array_equal(mod.nki.baremetal(mod.k)(a), a)
    np.testing.assert_array_equal(mod.k(a), a)


def test_affine_select_lower_triangle(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
            ix = nl.arange(128)[:, None]
            iy = nl.arange(128)[None, :]
            t = nl.load(a)
            nl.store(out, value=nisa.affine_select(pred=(iy < ix), on_true_tile=t, on_false_value=-9984.0))
            return out
    """,
    )
    a = np.ones((128, 128), np.float32)
    got = simulate_kernel(k, [a]).outputs
    want = np.where(np.tril(np.ones((128, 128)), -1) > 0, 1.0, -9984.0)
    np.testing.assert_array_equal(got, want)


def test_mixing_slices_and_aranges_is_rejected(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(a):
            i_p = nl.arange(128)[:, None]
            t = nl.load(a[i_p, 0:4])
            return a
    """,
    )
    with pytest.raises(DiagnosticError) as ei:
        simulate_kernel(k, [np.ones((128, 4), np.float32)])
    assert ei.value.diagnostic.code == "C2N3021" and ei.value.diagnostic.loc.line == 9


def test_masked_reduction_and_bn_stats_tail(tmp_path):
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(x):
            M, N = x.shape
            out = nl.ndarray((M, 2), nl.float32, buffer=nl.shared_hbm)
            i_p = nl.arange(M)[:, None]
            i_f = nl.arange(512)[None, :]
            t = nl.load(x)
            st = nl.ndarray((M, 12), nl.float32)
            for c in nl.affine_range(2):
                i_s = nl.arange(6)[None, :]
                st[i_p, c * 6 + i_s] = nisa.bn_stats(t[i_p, c * 512 + i_f], mask=(c * 512 + i_f < N),
                                                     dtype=nl.float32)
            nl.store(out, value=nisa.bn_aggr(st))
            return out
    """,
    )
    x = np.random.default_rng(5).standard_normal((16, 700)).astype(np.float32)
    got = simulate_kernel(k, [x]).outputs
    np.testing.assert_allclose(got[:, 0], x.mean(axis=1), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[:, 1], x.var(axis=1), rtol=1e-4, atol=1e-5)


# ``t[...] = op(..., mask=m)`` is one instruction writing ``t`` where ``m`` holds: the elements
# it leaves out keep their previous contents (reference 4.2), they are not NaN from a fresh tile.
MASKED_WRITES = {
    # a compile-time Python bool (e.g. a tile's position against a diagonal), nl and nisa forms
    "bool_false_nl": ("nl.copy(t, dtype=nl.float32, mask=False)", lambda a, prev: prev),
    "bool_true_nl": ("nl.multiply(t, 3.0, mask=True)", lambda a, prev: 3 * a),
    "bool_false_isa": (
        "nisa.tensor_scalar(t, np.multiply, 5.0, mask=False, dtype=nl.float32)",
        lambda a, prev: prev,
    ),
    "affine_select_false": (
        "nisa.affine_select(pred=(ip >= jf), on_true_tile=t, on_false_value=-9984.0, mask=(lo > 1))",
        lambda a, prev: prev,
    ),
    # a box of rows / columns: the instruction runs on the reduced shape
    "rows_box_nl": ("nl.add(t, 1.0, mask=(ip < 40))", lambda a, prev: _rows(a + 1, prev, 40)),
    "cols_box_isa": (
        "nisa.activation(np.exp, t, mask=(jf >= 24))",
        lambda a, prev: np.where(np.arange(64)[None, :] >= 24, np.exp(a), prev),
    ),
    "empty_box_isa": ("nisa.tensor_copy(t, mask=(ip < lo - 1))", lambda a, prev: prev),
    # fp32 instructions the simulator runs on a fast path, under a box that covers every row
    # (a tile's own bound on its first tile) or only some of them
    "all_rows_copy_isa": (
        "nisa.tensor_copy(t, dtype=nl.float32, mask=(ip < 130))",
        lambda a, prev: a,
    ),
    "some_rows_copy_isa": (
        "nisa.tensor_copy(t, dtype=nl.float32, mask=(ip < 40))",
        lambda a, prev: _rows(a, prev, 40),
    ),
    "all_rows_scalar_isa": (
        "nisa.tensor_scalar(t, np.multiply, 2.0, dtype=nl.float32, mask=(ip < 128))",
        lambda a, prev: 2 * a,
    ),
    "some_rows_memset_isa": (
        "nisa.memset((128, 64), 0.5, nl.float32, mask=(ip < 40))",
        lambda a, prev: _rows(np.full_like(a, 0.5), prev, 40),
    ),
    # not a box: the writes are gated element by element
    "triangle_nl": (
        "nl.subtract(t, 2.0, mask=(ip + lo > jf))",
        lambda a, prev: np.where(np.arange(128)[:, None] + 1 > np.arange(64), a - 2, prev),
    ),
}


def _rows(new, prev, n):
    return np.concatenate([new[:n], prev[n:]])


@pytest.mark.parametrize("case", sorted(MASKED_WRITES))
def test_masked_result_assigned_keeps_unselected_elements(tmp_path, case):
    expr, expect = MASKED_WRITES[case]
    k = kern(
        tmp_path,
        f"""
        @nki.jit
        def k(a):
            out = nl.ndarray(a.shape, nl.float32, buffer=nl.shared_hbm)
            t = nl.load(a)
            acc = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
            acc[...] = nl.multiply(t, -1.0)
            lo = 1
            ip, jf = nl.mgrid[0:128, 0:64]
            acc[...] = {expr}
            nl.store(out, value=acc)
            return out
    """,
    )
    a = np.random.default_rng(3).uniform(-1, 1, (128, 64)).astype(np.float32)
    got = np.asarray(simulate_kernel(k, [a]).outputs, np.float32).reshape(a.shape)
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, expect(a, -a), rtol=1e-6)


def test_causal_block_selection_by_masks_matches_reference(tmp_path):
    """Blocks of a causal score matrix chosen by compile-time masks (left of the diagonal: copy;
    on it: affine_select; right of it: nothing), the way tiled attention kernels skip work."""
    k = kern(
        tmp_path,
        """
        @nki.jit
        def k(s):
            P, F = 128, 32
            out = nl.ndarray(s.shape, nl.float32, buffer=nl.shared_hbm)
            for qi in nl.affine_range(s.shape[0] // P):
                row = nl.ndarray((nl.par_dim(P), s.shape[1]), dtype=nl.float32)
                for kj in nl.affine_range(s.shape[1] // F):
                    blk = nl.load(s[qi * P:(qi + 1) * P, kj * F:(kj + 1) * F])
                    left = qi * P >= (kj + 1) * F
                    on_or_right = qi * P < (kj + 1) * F
                    ip, jf = nl.mgrid[0:P, 0:F]
                    if on_or_right:
                        row[:, nl.ds(kj * F, F)] = nisa.affine_select(
                            pred=(qi * P + ip >= kj * F + jf), on_true_tile=blk,
                            on_false_value=-9984.0, dtype=nl.float32)
                    row[:, nl.ds(kj * F, F)] = nl.copy(blk, dtype=nl.float32, mask=left)
                nl.store(out[qi * P:(qi + 1) * P, :], value=row)
            return out
    """,
    )
    s = np.random.default_rng(4).standard_normal((256, 256)).astype(np.float32)
    got = np.asarray(simulate_kernel(k, [s]).outputs, np.float32).reshape(s.shape)
    want = np.where(np.tril(np.ones(s.shape, bool)), s, np.float32(-9984.0))
    np.testing.assert_array_equal(got, want)
