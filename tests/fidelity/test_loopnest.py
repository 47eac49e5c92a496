"""Matmul-shaped work read from the CUDA loop nest: when the kernel does not lift (an optional
bias tested against NULL) and the binding names no idiom, a port doing the contraction on the
vector engine is still told to use the tensor engine (C2N5002)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki import frontend
from cuda2nki.binding import load_binding
from cuda2nki.fidelity.check import check
from cuda2nki.fidelity.loopnest import contraction

ROOT = Path(__file__).resolve().parents[2]


def _found(rel: str):
    cu = ROOT / "corpus" / f"{rel}.cu"
    b = load_binding(cu.with_suffix(".toml"))
    tu = frontend.parse_source(cu.read_text(), str(cu))
    return contraction(tu, b.kernel, {t.name: len(t.shape) for t in b.tensors})


@pytest.mark.parametrize(
    ("rel", "factors"),
    [
        ("linalg/matmul_naive", ("A", "B")),  # acc += A[..k..] * B[..k..]
        ("linalg/matmul_tiled", ("As", "Bs")),  # shared tiles
        ("linalg/sgemm_tiled32", ("sA", "sB")),  # acc = fmaf(x, y, acc)
        ("linalg/bmm_nt", ("a", "bt")),  # aliases into the tensors
        ("lowp/matmul_bf16", ("A", "B")),  # bf16 loads converted to float
    ],
)
def test_contraction_loops_in_their_spellings(rel: str, factors: tuple[str, str]) -> None:
    c = _found(rel)
    assert c is not None and c.factors == factors


@pytest.mark.parametrize(
    "rel", ["linalg/gemv", "linalg/gemv_transposed", "norm/layernorm", "reduce/column_sum"]
)
def test_no_contraction_in_matrix_vector_products_or_reductions(rel: str) -> None:
    assert _found(rel) is None


CUDA = """// out = inp @ weight (+ bias when given): the bias is optional, tested against NULL.
#include <cuda_runtime.h>

__global__ void matmul_forward(float* out, const float* inp, const float* weight,
                               const float* bias, int M, int K, int N) {
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= M || c >= N) return;
    float val = (bias != NULL) ? bias[c] : 0.0f;
    for (int i = 0; i < K; i++) {
        val += inp[r * K + i] * weight[i * N + c];
    }
    out[r * N + c] = val;
}
"""

BINDING = """kernel = "matmul_forward"

[launch]
grid = ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block = [16, 16]

[params]
out = { shape = ["M", "N"], dtype = "float32", role = "out" }
inp = { shape = ["M", "K"], dtype = "float32", role = "in" }
weight = { shape = ["K", "N"], dtype = "float32", role = "in" }
bias = { shape = ["N"], dtype = "float32", role = "in" }
M = 130
K = 64
N = 96
"""

PORT = '''"""matmul on the vector engine: one rank-1 update per k."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_forward(inp, weight, bias):
    A, B = inp, weight
    M, K = A.shape
    _, N = B.shape
    P = nl.tile_size.pmax
    TN = 512
    C = nl.ndarray((M, N), dtype=A.dtype, buffer=nl.shared_hbm)
    for m in range(0, M, P):
        mm = min(P, M - m)
        a_t = nl.ndarray((mm, K), dtype=A.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a_t, src=A[m : m + mm, :])
        for n in range(0, N, TN):
            nn = min(TN, N - n)
            acc = nl.ndarray((mm, nn), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=acc, src=bias[n : n + nn].reshape((1, nn)).broadcast(0, mm))
            for k in range(K):
                b_row = nl.ndarray((mm, nn), dtype=B.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=b_row, src=B[k : k + 1, n : n + nn].broadcast(0, mm))
                nisa.scalar_tensor_tensor(
                    dst=acc,
                    data=b_row,
                    op0=nl.multiply,
                    operand0=a_t[:, k : k + 1],
                    op1=nl.add,
                    operand1=acc,
                )
            c_t = nl.ndarray((mm, nn), dtype=C.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=c_t, src=acc)
            nisa.dma_copy(dst=C[m : m + mm, n : n + nn], src=c_t)
    return C
'''


def test_vector_engine_matmul_behind_a_null_test(tmp_path: Path) -> None:
    (tmp_path / "mm.cu").write_text(CUDA)
    (tmp_path / "mm.toml").write_text(BINDING)
    (tmp_path / "port.py").write_text(PORT)
    rep = check(tmp_path / "mm.cu", tmp_path / "port.py", seeds=1)
    assert rep.numerics_outcome == "pass"
    hits = [f for f in rep.findings if f.code == "C2N5002"]
    assert hits, [f.code for f in rep.findings]
    line = next(i for i, ln in enumerate(PORT.splitlines(), 1) if "scalar_tensor_tensor" in ln)
    assert hits[0].loc.line == line
    assert "CUDA kernel's loop at line 11 is a contraction" in hits[0].message
    # the roofline's flops come from the same loop nest: 2 M N K at the traced shape
    dims = dict(kv.split("=") for kv in rep.trace["shape"].split(","))
    m, n, k = (int(dims.get(d, v)) for d, v in (("M", 130), ("N", 96), ("K", 64)))
    assert rep.trace["kernel_flops_from"] == "loop nest"
    assert rep.trace["kernel_flops"] == 2 * m * n * k
