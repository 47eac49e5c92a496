"""The matmul optimisation steps of the NKI tutorial, in our own words, on both API generations:
each step must be faster in the cost model than the one before, as the published times are.

The steps (NKI performance guide, "matrix multiplication"): (1) tiles loaded inside the
innermost loop; (2) the stationary tiles of a row block hoisted out of the column loop;
(3) blocks of several tiles along the free dimensions, loaded once and reused; (4) blocks in all
three dimensions, partial sums accumulated in SBUF across contraction blocks, fewer and larger
DMAs.  In the legacy API a ``psum += nl.matmul(...)`` accumulates in PSUM on the TensorE: it
costs nothing beyond the matmul (as ``nisa.nc_matmul`` accumulation does)."""

from __future__ import annotations

import textwrap

import ml_dtypes
import numpy as np
import pytest

from cuda2nki.nkisim import load_kernel, simulate_kernel

LEG = "from neuronxcc import nki\nimport neuronxcc.nki.language as nl\n\n"
CUR = "import nki\nimport nki.language as nl\nimport nki.isa as nisa\n\n"

LEGACY = {
    "naive": """
        @nki.jit
        def mm(a_t, b):
            kk, mm_ = a_t.shape
            nn = b.shape[1]
            c = nl.ndarray((mm_, nn), dtype=a_t.dtype, buffer=nl.shared_hbm)
            for i in nl.affine_range(mm_ // 128):
                for j in nl.affine_range(nn // 512):
                    acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
                    for p in nl.affine_range(kk // 128):
                        x = nl.load(a_t[p * 128:(p + 1) * 128, i * 128:(i + 1) * 128])
                        y = nl.load(b[p * 128:(p + 1) * 128, j * 512:(j + 1) * 512])
                        acc += nl.matmul(x, y, transpose_x=True)
                    out = nl.copy(acc, dtype=c.dtype)
                    nl.store(c[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], value=out)
            return c
    """,
    "hoisted": """
        @nki.jit
        def mm(a_t, b):
            kk, mm_ = a_t.shape
            nn = b.shape[1]
            nk = kk // 128
            c = nl.ndarray((mm_, nn), dtype=a_t.dtype, buffer=nl.shared_hbm)
            for i in nl.affine_range(mm_ // 128):
                xs = nl.ndarray((nk, nl.par_dim(128), 128), dtype=a_t.dtype, buffer=nl.sbuf)
                for p in nl.affine_range(nk):
                    xs[p] = nl.load(a_t[p * 128:(p + 1) * 128, i * 128:(i + 1) * 128])
                for j in nl.affine_range(nn // 512):
                    ys = nl.ndarray((nk, nl.par_dim(128), 512), dtype=b.dtype, buffer=nl.sbuf)
                    for p in nl.affine_range(nk):
                        ys[p] = nl.load(b[p * 128:(p + 1) * 128, j * 512:(j + 1) * 512])
                    acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
                    for p in nl.affine_range(nk):
                        acc += nl.matmul(xs[p], ys[p], transpose_x=True)
                    out = nl.copy(acc, dtype=c.dtype)
                    nl.store(c[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], value=out)
            return c
    """,
    "blocked_free": """
        @nki.jit
        def mm(a_t, b):
            kk, mm_ = a_t.shape
            nn = b.shape[1]
            nk, bm, bn = kk // 128, 2, 2
            c = nl.ndarray((mm_, nn), dtype=a_t.dtype, buffer=nl.shared_hbm)
            for i2 in nl.affine_range(mm_ // (128 * bm)):
                xs = nl.ndarray((nk, nl.par_dim(128), 128 * bm), dtype=a_t.dtype, buffer=nl.sbuf)
                for p in nl.affine_range(nk):
                    r0, c0 = p * 128, i2 * 128 * bm
                    xs[p] = nl.load(a_t[r0:r0 + 128, c0:c0 + 128 * bm])
                for j2 in nl.affine_range(nn // (512 * bn)):
                    ys = nl.ndarray((nk, nl.par_dim(128), 512 * bn), dtype=b.dtype, buffer=nl.sbuf)
                    for p in nl.affine_range(nk):
                        r0, c0 = p * 128, j2 * 512 * bn
                        ys[p] = nl.load(b[r0:r0 + 128, c0:c0 + 512 * bn])
                    for i in nl.affine_range(bm):
                        for j in nl.affine_range(bn):
                            acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
                            for p in nl.affine_range(nk):
                                acc[...] += nl.matmul(
                                    xs[p, :, i * 128:(i + 1) * 128],
                                    ys[p, :, j * 512:(j + 1) * 512],
                                    transpose_x=True,
                                )
                            out = nl.copy(acc, dtype=c.dtype)
                            r0 = (i2 * bm + i) * 128
                            c0 = (j2 * bn + j) * 512
                            nl.store(c[r0:r0 + 128, c0:c0 + 512], value=out)
            return c
    """,
    "optimised": """
        @nki.jit
        def mm(a_t, b):
            kk, mm_ = a_t.shape
            nn = b.shape[1]
            bm, bn, bk = 4, 2, 2
            c = nl.ndarray((mm_, nn), dtype=a_t.dtype, buffer=nl.shared_hbm)
            for j2 in nl.affine_range(nn // (512 * bn)):
                for i2 in nl.affine_range(mm_ // (128 * bm)):
                    part = nl.zeros((bm, nl.par_dim(128), 512 * bn), nl.float32, buffer=nl.sbuf)
                    for k2 in nl.sequential_range(kk // (128 * bk)):
                        xs = nl.ndarray((bk, nl.par_dim(128), 128 * bm), a_t.dtype, buffer=nl.sbuf)
                        ys = nl.ndarray((bk, nl.par_dim(128), 512 * bn), b.dtype, buffer=nl.sbuf)
                        for p in nl.affine_range(bk):
                            r0 = (k2 * bk + p) * 128
                            xs[p] = nl.load(a_t[r0:r0 + 128, i2 * 128 * bm:(i2 + 1) * 128 * bm])
                            ys[p] = nl.load(b[r0:r0 + 128, j2 * 512 * bn:(j2 + 1) * 512 * bn])
                        for i in nl.affine_range(bm):
                            for j in nl.affine_range(bn):
                                acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
                                for p in nl.affine_range(bk):
                                    acc[0:128, 0:512] += nl.matmul(
                                        xs[p, :, i * 128:(i + 1) * 128],
                                        ys[p, :, j * 512:(j + 1) * 512],
                                        transpose_x=True,
                                    )
                                part[i, :, j * 512:(j + 1) * 512] = nl.add(
                                    part[i, :, j * 512:(j + 1) * 512], acc
                                )
                    for i in nl.affine_range(bm):
                        out = nl.copy(part[i], dtype=c.dtype)
                        r0 = (i2 * bm + i) * 128
                        nl.store(c[r0:r0 + 128, j2 * 512 * bn:(j2 + 1) * 512 * bn], value=out)
            return c
    """,
}

CURRENT = {
    "naive": """
        @nki.jit
        def mm(a_t, b):
            kk, mm_ = a_t.shape
            nn = b.shape[1]
            c = nl.ndarray((mm_, nn), dtype=a_t.dtype, buffer=nl.shared_hbm)
            for i in nl.affine_range(mm_ // 128):
                for j in nl.affine_range(nn // 512):
                    acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
                    for p in nl.affine_range(kk // 128):
                        x = nl.ndarray((128, 128), a_t.dtype, buffer=nl.sbuf)
                        y = nl.ndarray((128, 512), b.dtype, buffer=nl.sbuf)
                        nisa.dma_copy(dst=x, src=a_t[p * 128:(p + 1) * 128, i * 128:(i + 1) * 128])
                        nisa.dma_copy(dst=y, src=b[p * 128:(p + 1) * 128, j * 512:(j + 1) * 512])
                        nisa.nc_matmul(acc, x, y)
                    out = nl.ndarray((128, 512), c.dtype, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=out, src=acc)
                    nisa.dma_copy(dst=c[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], src=out)
            return c
    """,
    "hoisted": """
        @nki.jit
        def mm(a_t, b):
            kk, mm_ = a_t.shape
            nn = b.shape[1]
            nk = kk // 128
            c = nl.ndarray((mm_, nn), dtype=a_t.dtype, buffer=nl.shared_hbm)
            for i in nl.affine_range(mm_ // 128):
                xs = nl.ndarray((128, nk, 128), a_t.dtype, buffer=nl.sbuf)
                for p in nl.affine_range(nk):
                    nisa.dma_copy(
                        dst=xs[:, p, :], src=a_t[p * 128:(p + 1) * 128, i * 128:(i + 1) * 128]
                    )
                for j in nl.affine_range(nn // 512):
                    ys = nl.ndarray((128, nk, 512), b.dtype, buffer=nl.sbuf)
                    for p in nl.affine_range(nk):
                        nisa.dma_copy(
                            dst=ys[:, p, :], src=b[p * 128:(p + 1) * 128, j * 512:(j + 1) * 512]
                        )
                    acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
                    for p in nl.affine_range(nk):
                        nisa.nc_matmul(acc, xs[:, p, :], ys[:, p, :])
                    out = nl.ndarray((128, 512), c.dtype, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=out, src=acc)
                    nisa.dma_copy(dst=c[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], src=out)
            return c
    """,
    "blocked_free": """
        @nki.jit
        def mm(a_t, b):
            kk, mm_ = a_t.shape
            nn = b.shape[1]
            nk, bm, bn = kk // 128, 2, 2
            c = nl.ndarray((mm_, nn), dtype=a_t.dtype, buffer=nl.shared_hbm)
            for i2 in nl.affine_range(mm_ // (128 * bm)):
                xs = nl.ndarray((128, nk, 128 * bm), a_t.dtype, buffer=nl.sbuf)
                for p in nl.affine_range(nk):
                    c0 = i2 * 128 * bm
                    nisa.dma_copy(dst=xs[:, p, :], src=a_t[p * 128:(p + 1) * 128, c0:c0 + 128 * bm])
                for j2 in nl.affine_range(nn // (512 * bn)):
                    ys = nl.ndarray((128, nk, 512 * bn), b.dtype, buffer=nl.sbuf)
                    for p in nl.affine_range(nk):
                        c0 = j2 * 512 * bn
                        nisa.dma_copy(dst=ys[:, p, :], src=b[p * 128:(p + 1) * 128, c0:c0 + 512 * bn])
                    for i in nl.affine_range(bm):
                        for j in nl.affine_range(bn):
                            acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
                            for p in nl.affine_range(nk):
                                nisa.nc_matmul(
                                    acc, xs[:, p, i * 128:(i + 1) * 128], ys[:, p, j * 512:(j + 1) * 512]
                                )
                            out = nl.ndarray((128, 512), c.dtype, buffer=nl.sbuf)
                            nisa.tensor_copy(dst=out, src=acc)
                            r0, c0 = (i2 * bm + i) * 128, (j2 * bn + j) * 512
                            nisa.dma_copy(dst=c[r0:r0 + 128, c0:c0 + 512], src=out)
            return c
    """,
    "optimised": """
        @nki.jit
        def mm(a_t, b):
            kk, mm_ = a_t.shape
            nn = b.shape[1]
            bm, bn, bk = 4, 2, 2
            c = nl.ndarray((mm_, nn), dtype=a_t.dtype, buffer=nl.shared_hbm)
            for j2 in nl.affine_range(nn // (512 * bn)):
                for i2 in nl.affine_range(mm_ // (128 * bm)):
                    part = nl.ndarray((128, bm, 512 * bn), nl.float32, buffer=nl.sbuf)
                    nisa.memset(part, 0.0)
                    for k2 in nl.sequential_range(kk // (128 * bk)):
                        xs = nl.ndarray((128, bk, 128 * bm), a_t.dtype, buffer=nl.sbuf)
                        ys = nl.ndarray((128, bk, 512 * bn), b.dtype, buffer=nl.sbuf)
                        for p in nl.affine_range(bk):
                            r0 = (k2 * bk + p) * 128
                            cm, cn = i2 * 128 * bm, j2 * 512 * bn
                            nisa.dma_copy(dst=xs[:, p, :], src=a_t[r0:r0 + 128, cm:cm + 128 * bm])
                            nisa.dma_copy(dst=ys[:, p, :], src=b[r0:r0 + 128, cn:cn + 512 * bn])
                        for i in nl.affine_range(bm):
                            for j in nl.affine_range(bn):
                                acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)
                                for p in nl.affine_range(bk):
                                    nisa.nc_matmul(
                                        acc,
                                        xs[:, p, i * 128:(i + 1) * 128],
                                        ys[:, p, j * 512:(j + 1) * 512],
                                    )
                                dst = part[:, i, j * 512:(j + 1) * 512]
                                nisa.tensor_tensor(dst=dst, data1=dst, data2=acc, op=nl.add)
                    for i in nl.affine_range(bm):
                        out = nl.ndarray((128, 512 * bn), c.dtype, buffer=nl.sbuf)
                        nisa.tensor_copy(dst=out, src=part[:, i, :])
                        r0, cn = (i2 * bm + i) * 128, j2 * 512 * bn
                        nisa.dma_copy(dst=c[r0:r0 + 128, cn:cn + 512 * bn], src=out)
            return c
    """,
}

BF16 = ml_dtypes.bfloat16
ORDER = ("naive", "hoisted", "blocked_free", "optimised")
K, M, N = 512, 512, 1024


def _run(tmp_path, header: str, name: str, body: str):
    path = tmp_path / f"{name}.py"
    path.write_text(header + textwrap.dedent(body))
    rng = np.random.default_rng(0)
    a_t = rng.standard_normal((K, M)).astype(BF16)
    b = rng.standard_normal((K, N)).astype(BF16)
    res = simulate_kernel(load_kernel(path), [a_t, b], profile=True)
    want = a_t.astype(np.float32).T @ b.astype(np.float32)
    np.testing.assert_allclose(res.outputs.astype(np.float32), want, rtol=2e-2, atol=0.5)
    return res.profile


@pytest.fixture(scope="module")
def profiles(tmp_path_factory):
    out = {}
    for api, header, kernels in (("legacy", LEG, LEGACY), ("current", CUR, CURRENT)):
        tmp = tmp_path_factory.mktemp(api)
        out[api] = {n: _run(tmp, header, n, kernels[n]) for n in ORDER}
    return out


@pytest.mark.parametrize("api", ["legacy", "current"])
def test_tutorial_matmul_steps_rank_in_the_published_order(profiles, api):
    times = {n: p.overlapped_ns for n, p in profiles[api].items()}
    assert sorted(ORDER, key=lambda n: -times[n]) == list(ORDER), times


@pytest.mark.parametrize("step", ORDER)
def test_legacy_step_costs_what_the_current_api_step_costs(profiles, step):
    # ``acc += nl.matmul``, ``acc[...] += nl.matmul`` (a store-back of the same view),
    # ``tiles[p] = nl.load(...)`` (the DMA writes the destination) and the zero fill of a PSUM
    # accumulator (folded into the first matmul) cost no vector instruction
    leg, cur = profiles["legacy"][step], profiles["current"][step]
    assert leg.instructions == cur.instructions
    assert leg.time_ns == pytest.approx(cur.time_ns)


def _ops(tmp_path, body: str, inputs) -> list[tuple[str, str]]:
    path = tmp_path / "k.py"
    path.write_text(LEG + textwrap.dedent(body))
    res = simulate_kernel(load_kernel(path), inputs)
    return [(i.engine, i.op) for i in res.trace]


def test_psum_zeros_read_before_any_matmul_keep_their_memset(tmp_path):
    ops = _ops(
        tmp_path,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
            acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
            nl.store(out, value=nl.copy(acc))
            return out
        """,
        [np.ones((4, 4), np.float32)],
    )
    assert ops == [("vector", "memset"), ("vector", "tensor_copy"), ("dma", "dma_copy")]


def test_assigning_an_older_result_is_a_copy(tmp_path):
    # y was not produced by the instruction just before the assignment: a real copy
    ops = _ops(
        tmp_path,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray((128, 4), nl.float32, buffer=nl.shared_hbm)
            y = nl.load(a)
            z = nl.exp(y)
            t = nl.ndarray((128, 4), nl.float32, buffer=nl.sbuf)
            t[...] = y
            nl.store(out, value=nl.add(t, z))
            return out
        """,
        [np.ones((128, 4), np.float32)],
    )
    assert ops.count(("vector", "tensor_copy")) == 1


def test_in_place_update_of_an_indexed_sbuf_tile_is_one_instruction(tmp_path):
    ops = _ops(
        tmp_path,
        """
        @nki.jit
        def k(a):
            out = nl.ndarray((128, 4), nl.float32, buffer=nl.shared_hbm)
            t = nl.load(a)
            t[0:128, 0:2] *= 3.0
            nl.store(out, value=t)
            return out
        """,
        [np.ones((128, 4), np.float32)],
    )
    assert ops == [("dma", "dma_copy"), ("vector", "tensor_scalar"), ("dma", "dma_copy")]


@pytest.mark.parametrize(
    ("init", "base"),
    [
        ("acc = nl.ndarray((128, 512), nl.float32, buffer=nl.psum)", 0.0),  # first += writes
        ("acc = nl.zeros((128, 512), nl.float32, buffer=nl.psum)", 0.0),
        ("acc = nl.full((128, 512), 2.0, nl.float32, buffer=nl.psum)", 2.0),
    ],
)
def test_legacy_psum_accumulation_values(tmp_path, init, base):
    path = tmp_path / "k.py"
    path.write_text(
        LEG
        + textwrap.dedent(
            f"""
            @nki.jit
            def k(a, b):
                out = nl.ndarray((128, 512), nl.float32, buffer=nl.shared_hbm)
                {init}
                for i in nl.affine_range(3):
                    x = nl.load(a[i * 128:(i + 1) * 128, :])
                    acc += nl.matmul(x, nl.load(b[i * 128:(i + 1) * 128, :]), transpose_x=True)
                nl.store(out, value=nl.copy(acc))
                return out
            """
        )
    )
    rng = np.random.default_rng(3)
    a = rng.standard_normal((384, 128)).astype(np.float32)
    b = rng.standard_normal((384, 512)).astype(np.float32)
    res = simulate_kernel(load_kernel(path), [a, b])
    np.testing.assert_allclose(res.outputs, base + a.T @ b, rtol=1e-4, atol=1e-3)
    assert not res.warnings
