"""Chained host assignments (``M = N = K = 2048;``, ``n = (m = 64);``): every name in the chain
takes the value stored, so sizes and launch geometry come from the host code."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

KERNEL = """
__global__ void mm(const float* A, const float* B, float* C, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
    }
}
"""

LAUNCH = """
    float *A, *B, *C;
    dim3 block(16, 16);
    dim3 grid((N + 15) / 16, (M + 15) / 16);
    mm<<<grid, block>>>(A, B, C, M, N, K);
    return 0;
}
"""

#: (declarations and chained assignments, expected host values of M, N, K)
CHAINS = [
    ("    int M, N, K;\n    M = N = K = 96;", (96, 96, 96)),
    ("    int K, N, M;\n    K = N = M = 48;", (48, 48, 48)),
    ("    int M, N, K;\n    M = (N = 32);\n    K = 80;", (32, 32, 80)),
    ("    int M, N, K;\n    K = 64;\n    M = N = K;", (64, 64, 64)),
    ("    int M = 16, N, K;\n    N = K = 2 * M;", (16, 32, 32)),
]


def _values(decls: str) -> dict[str, object]:
    src = KERNEL + "int main() {\n" + decls + LAUNCH
    partial, _ = infer_binding(parse_source(src, "chain.cu"), "mm")
    return partial.get("params", {})


@pytest.mark.parametrize(("decls", "want"), CHAINS)
def test_every_name_of_a_chain_takes_the_stored_value(decls: str, want: tuple[int, ...]) -> None:
    params = _values(decls)
    got = tuple(params.get(name) for name in ("M", "N", "K"))
    assert got == want, params
