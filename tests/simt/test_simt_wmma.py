"""wmma GEMMs on the SIMT interpreter match NumPy (cuda2nki.simt.wmma)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.frontend import parse_source
from cuda2nki.simt import run_kernel_full
from cuda2nki.simt.wmma import round_tf32

# C = alpha * A @ B + beta * C; one warp per M x N tile of C; A is row- or column-major
GEMM = """\
#include <mma.h>
using namespace nvcuda;
__global__ void gemm(const {T}* A, const {T}* B, {C_t}* C, int M, int N, int K,
                     {C_t} alpha, {C_t} beta) {{
    int wm = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int wn = blockIdx.y;
    wmma::fragment<wmma::matrix_a, {m}, {n}, {k}, {F}, wmma::{la}> a;
    wmma::fragment<wmma::matrix_b, {m}, {n}, {k}, {F}, wmma::row_major> b;
    wmma::fragment<wmma::accumulator, {m}, {n}, {k}, {C_t}> acc, c;
    wmma::fill_fragment(acc, 0);
    for (int kk = 0; kk < K; kk += {k}) {{
        wmma::load_matrix_sync(a, A + {a_off}, {lda});
        wmma::load_matrix_sync(b, B + kk * N + wn * {n}, N);
        {convert}
        wmma::mma_sync(acc, a, b, acc);
    }}
    {C_t}* tile = C + wm * {m} * N + wn * {n};
    wmma::load_matrix_sync(c, tile, N, wmma::mem_row_major);
    for (int i = 0; i < c.num_elements; i++) c.x[i] = alpha * acc.x[i] + beta * c.x[i];
    wmma::store_matrix_sync(tile, c, N, wmma::mem_row_major);
}}
"""
TF32_CONVERT = (
    "for (int i = 0; i < a.num_elements; i++) a.x[i] = wmma::__float_to_tf32(a.x[i]);\n"
    "        for (int i = 0; i < b.num_elements; i++) b.x[i] = wmma::__float_to_tf32(b.x[i]);"
)
CASES = {
    "half-row": dict(T="half", F="half", C_t="float", m=16, n=16, k=16, la="row_major"),
    "half-col-32x8": dict(T="half", F="half", C_t="float", m=32, n=8, k=16, la="col_major"),
    "bf16-8x32": dict(
        T="__nv_bfloat16", F="__nv_bfloat16", C_t="float", m=8, n=32, k=16, la="row_major"
    ),
    "tf32": dict(
        T="float", F="wmma::precision::tf32", C_t="float", m=16, n=16, k=8, la="row_major"
    ),
    "double": dict(T="double", F="double", C_t="double", m=8, n=8, k=4, la="col_major"),
    "int8": dict(T="signed char", F="signed char", C_t="int", m=16, n=16, k=16, la="row_major"),
}
NP = {
    "half": np.float16,
    "__nv_bfloat16": ml_dtypes.bfloat16,
    "float": np.float32,
    "double": np.float64,
}


def _source(p: dict) -> str:
    col = p["la"] == "col_major"
    a_off = "kk * M + wm * {m}" if col else "wm * {m} * K + kk"
    return GEMM.format(
        **p,
        a_off=a_off.format(**p),
        lda="M" if col else "K",
        convert=TF32_CONVERT if "tf32" in p["F"] else "",
    )


@pytest.mark.parametrize("name", list(CASES))
def test_wmma_gemm_matches_numpy(name):
    p = CASES[name]
    m, n, k = p["m"], p["n"], p["k"]
    M, N, K = 2 * m, 3 * n, 4 * k
    rng = np.random.default_rng(1)
    if p["T"] == "signed char":
        A = rng.integers(-128, 128, (M, K)).astype(np.int8)
        B = rng.integers(-128, 128, (K, N)).astype(np.int8)
        C = rng.integers(-1000, 1000, (M, N)).astype(np.int32)
        alpha, beta = 3, -2
    else:
        dt = NP[p["T"]]
        A = rng.standard_normal((M, K)).astype(dt)
        B = rng.standard_normal((K, N)).astype(dt)
        C = rng.standard_normal((M, N)).astype(np.float64 if p["C_t"] == "double" else np.float32)
        alpha, beta = 1.5, 0.25
    tu = parse_source(_source(p), "k.cu")
    assert not tu.rejected, tu.diagnostics
    a_mem = A.T.copy() if p["la"] == "col_major" else A
    args = dict(A=a_mem, B=B, C=C.copy(), M=M, N=N, K=K, alpha=alpha, beta=beta)
    r = run_kernel_full(tu, "gemm", grid=(1, 3), block=(64,), args=args)
    a64, b64 = A.astype(np.float64), B.astype(np.float64)
    if "tf32" in p["F"]:
        a64, b64 = (round_tf32(x).astype(np.float64) for x in (A, B))
    if p["T"] == "signed char":
        ref = alpha * (A.astype(np.int64) @ B.astype(np.int64)) + beta * C
        np.testing.assert_array_equal(r.outputs["C"], ref.astype(np.int32))
        return
    # the accumulator is rounded after each k-tile's exact product-sum
    acc = np.zeros((M, N), C.dtype)
    for t in range(0, K, k):
        acc = (acc.astype(np.float64) + a64[:, t : t + k] @ b64[t : t + k]).astype(C.dtype)
    ref = C.dtype.type(alpha) * acc + C.dtype.type(beta) * C
    np.testing.assert_array_equal(r.outputs["C"], ref)


def test_fragment_elements_follow_the_documented_mapping():
    src = """\
#include <mma.h>
using namespace nvcuda;
__global__ void k(const float* in, float* lanes) {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> f;
    wmma::load_matrix_sync(f, in, 16, wmma::mem_row_major);
    for (int i = 0; i < f.num_elements; i++) lanes[threadIdx.x * f.num_elements + i] = f.x[i];
}
"""
    x = np.arange(256, dtype=np.float32)
    tu = parse_source(src, "k.cu")
    out = run_kernel_full(tu, "k", grid=(1,), block=(32,), args={"in": x, "lanes": x * 0})
    np.testing.assert_array_equal(out.outputs["lanes"], x)  # lane l: elements 8l .. 8l+7


def test_mma_by_part_of_a_warp_is_refused():
    src = """\
#include <mma.h>
using namespace nvcuda;
__global__ void k(const half* a, float* c) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, a, 16);
    if (threadIdx.x < 16) wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(c, acc, 16, wmma::mem_row_major);
}
"""
    tu = parse_source(src, "k.cu")
    args = dict(a=np.ones(256, np.float16), c=np.zeros(256, np.float32))
    with pytest.raises(DiagnosticError) as exc:
        run_kernel_full(tu, "k", grid=(1,), block=(32,), args=args)
    assert exc.value.diagnostic.code == "C2N1505" and "16 of the 32 lanes" in str(exc.value)
