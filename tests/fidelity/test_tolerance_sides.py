"""Tolerance from both sides: the CUDA kernel's own rounding counts.  A kernel that folds a large
bias into its fp32 running sum loses the products' low bits; a port that adds the bias once to
an exact-ish PSUM sum is closer to the fp64 evaluation of the CUDA kernel than the kernel itself,
and must not be called wrong for it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cuda2nki.fidelity.check import check
from cuda2nki.fidelity.check_judge import _own_rounding
from cuda2nki.fidelity.compare import Comparison
from cuda2nki.fidelity.tolerance import Tolerance

CUDA = """// out = inp @ weight + bias, the bias folded into the running sum (llm.c-style naive matmul).
#include <cuda_runtime.h>

__global__ void matmul_bias(float* out, const float* inp, const float* weight,
                            const float* bias, int M, int K, int N) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float val = bias[col];
        for (int k = 0; k < K; k++) {
            val += inp[row * K + k] * weight[k * N + col];
        }
        out[row * N + col] = val;
    }
}
"""

BINDING = """kernel = "matmul_bias"
idiom = "matmul"

[launch]
grid = ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block = [16, 16]

[params]
out = { shape = ["M", "N"], dtype = "float32", role = "out" }
inp = { shape = ["M", "K"], dtype = "float32", role = "in" }
weight = { shape = ["K", "N"], dtype = "float32", role = "in" }
bias = { shape = ["N"], dtype = "float32", role = "in", range = [1000000.0, 1000001.0] }
M = 64
N = 96
K = 512
"""

PORT = '''"""out = inp @ weight + bias: K-tiles accumulate in fp32 PSUM on the tensor engine,
then the bias is added once per 128 x 512 block."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_bias(inp, weight, bias):
    A, B = inp, weight
    M, K = A.shape
    K_, N = B.shape
    assert K == K_, "A and B disagree on K"
    TK = nl.tile_size.pmax
    TM = nl.tile_size.gemm_stationary_fmax
    TN = nl.tile_size.gemm_moving_fmax
    KT = (K + TK - 1) // TK
    C = nl.ndarray((M, N), dtype=A.dtype, buffer=nl.shared_hbm)
    bias_t = nl.ndarray((TM, N), dtype=bias.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=bias_t, src=bias.reshape((1, N)).broadcast(0, TM))
    for m in range(0, M, TM):
        mm = min(TM, M - m)
        a_t = nl.ndarray((TK, KT, TM), dtype=A.dtype, buffer=nl.sbuf)
        for kt in range(KT):
            k = kt * TK
            kk = min(TK, K - k)
            blk = nl.ndarray((TM, TK), dtype=A.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=blk[0:mm, 0:kk], src=A[m : m + mm, k : k + kk])
            blk_t = nl.ndarray((TK, TM), dtype=A.dtype, buffer=nl.psum)
            nisa.nc_transpose(dst=blk_t[0:kk, 0:mm], data=blk[0:mm, 0:kk])
            nisa.tensor_copy(dst=a_t[0:kk, kt, 0:mm], src=blk_t[0:kk, 0:mm])
        for n in range(0, N, TN):
            nn = min(TN, N - n)
            acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for kt in range(KT):
                k = kt * TK
                kk = min(TK, K - k)
                b_t = nl.ndarray((TK, TN), dtype=B.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=b_t[0:kk, 0:nn], src=B[k : k + kk, n : n + nn])
                nisa.nc_matmul(
                    dst=acc[0:mm, 0:nn],
                    stationary=a_t[0:kk, kt, 0:mm],
                    moving=b_t[0:kk, 0:nn],
                    accumulate=kt > 0,
                )
            c_t = nl.ndarray((TM, TN), dtype=C.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(
                dst=c_t[0:mm, 0:nn], data1=acc[0:mm, 0:nn], data2=bias_t[0:mm, n : n + nn], op=nl.add
            )
            nisa.dma_copy(dst=C[m : m + mm, n : n + nn], src=c_t[0:mm, 0:nn])
    return C
'''


def _files(tmp_path: Path, port: str) -> tuple[Path, Path]:
    (tmp_path / "matmul_bias.cu").write_text(CUDA)
    (tmp_path / "matmul_bias.toml").write_text(BINDING)
    (tmp_path / "port.py").write_text(port)
    return tmp_path / "matmul_bias.cu", tmp_path / "port.py"


def test_a_port_more_accurate_than_the_kernel_is_not_a_defect(tmp_path: Path) -> None:
    cu, port = _files(tmp_path, PORT)
    rep = check(cu, port, seeds=1)
    assert rep.numerics_outcome == "pass", [
        n for n in rep.numerics if n["classification"] != "expected"
    ]
    assert not [f.code for f in rep.findings if f.code.startswith("C2N40")]
    # the kernel's folded bias is accounted for either by the IR-derived bound (the running sum's
    # starting value) or by the fp64 evaluation below; both are pinned separately


def _failing(n: int) -> Comparison:
    return Comparison("out", (n,), 1.0, 1.0, 1.0, 100.0, n, 1e-3, "defect", "wrong", "differs")


def test_fp64_evaluation_settles_a_port_closer_to_it_than_the_kernel() -> None:
    exact = np.linspace(1e6, 1e6 + 1, 64)
    ref = exact + 0.25  # the fp32 CUDA kernel's own rounding error
    got = exact + 1e-4  # the port, much closer to the fp64 evaluation
    tol = Tolerance(bound=1e-3, source="ir")
    c = _own_rounding(_failing(64), got, ref, exact, tol)
    assert c.classification == "expected" and c.defect is None
    assert "the CUDA kernel's error" in c.evidence


def test_fp64_evaluation_keeps_a_port_farther_from_it_than_the_kernel_allows() -> None:
    exact = np.linspace(1e6, 1e6 + 1, 64)
    ref = exact + 0.25
    got = exact + 2.0  # beyond the kernel's own error plus the tolerance
    tol = Tolerance(bound=1e-3, source="ir")
    c = _own_rounding(_failing(64), got, ref, exact, tol)
    assert c.classification == "defect"
    assert _own_rounding(_failing(64), got, ref, None, tol).classification == "defect"


def test_a_port_worse_than_the_kernel_is_still_a_defect(tmp_path: Path) -> None:
    # the bias added twice: far from the fp64 evaluation, however inaccurate the kernel is
    twice = PORT.replace(
        "op=nl.add",
        "op=nl.add\n            )\n            nisa.tensor_tensor(\n"
        "                dst=c_t[0:mm, 0:nn], data1=c_t[0:mm, 0:nn], "
        "data2=bias_t[0:mm, n : n + nn], op=nl.add",
    )
    assert twice != PORT
    cu, port = _files(tmp_path, twice)
    rep = check(cu, port, seeds=1)
    assert rep.numerics_outcome == "fail"
