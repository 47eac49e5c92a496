"""A kernel whose loop walks ``n / TILE`` whole tiles (a tiled matmul) is written for multiples
of TILE: when the host's ``n`` is one, inference says so and check keeps its sizes multiples."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

TILED = """
#define TILE {tile}
__global__ void mm(const float* A, const float* B, float* C, int {n}) {{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int col = threadIdx.x + blockDim.x * blockIdx.x;
    int row = threadIdx.y + blockDim.y * blockIdx.y;
    if (row < {n} && col < {n}) {{
        float acc = 0;
        for (int t = 0; {cond}; t++) {{
            As[threadIdx.y][threadIdx.x] = A[row * {n} + t * TILE + threadIdx.x];
            Bs[threadIdx.y][threadIdx.x] = B[(t * TILE + threadIdx.y) * {n} + col];
            __syncthreads();
            for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
            __syncthreads();
        }}
        C[row * {n} + col] = acc;
    }}
}}
int main() {{
    const int size = {host};
    float *A, *B, *C;
    dim3 block(TILE, TILE);
    dim3 grid((size + block.x - 1) / block.x, (size + block.y - 1) / block.y);
    mm<<<grid, block>>>(A, B, C, size);
    return 0;
}}
"""


@pytest.mark.parametrize(
    ("tile", "n", "cond"),
    [
        (16, "ds", "t < ds / TILE"),
        (32, "width", "t < width / TILE"),
        (8, "N", "N / TILE > t"),
        (16, "ds", "t < (int)(ds / TILE)"),
    ],
)
def test_a_loop_over_whole_tiles_makes_the_size_a_multiple(tile: int, n: str, cond: str) -> None:
    src = TILED.format(tile=tile, n=n, cond=cond.replace("TILE", "TILE"), host=tile * 40)
    partial, diags = infer_binding(parse_source(src, "mm.cu"), "mm")
    assert partial.get("check", {}).get("multiples") == {n: tile}, partial.get("check")
    assert any("whole tiles" in d.message for d in diags)
    assert partial["params"][n] % tile == 0


def test_a_host_size_that_is_no_multiple_gives_no_step() -> None:
    src = TILED.format(tile=16, n="ds", cond="t < ds / TILE", host=16 * 40 + 3)
    partial, _ = infer_binding(parse_source(src, "mm.cu"), "mm")
    assert "ds" not in partial.get("check", {}).get("multiples", {})
