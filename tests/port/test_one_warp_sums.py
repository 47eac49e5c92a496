"""Block-wide column sums written for any block size and launched with one warp: the level over
the warps of the block (a second shuffle stage over the per-warp partials, a loop over them, or
the rows a warp strides by) has one trip.  That level is dropped (``unit-reductions``), so the
sum ports as a column sum on the tensor engine, with correct numbers on both targets."""

from __future__ import annotations

import pytest

from cuda2nki.ir.nodes import Matmul
from cuda2nki.rewrite import nodes
from tests.port.acceptance import port_variant

_SHUFFLE_TWO_STAGES = """
__global__ void k(float* y, const float* x, int N, int C) {
    __shared__ float part[32];
    int c = blockIdx.x;
    int lane = threadIdx.x % 32, wid = threadIdx.x / 32;
    int nw = blockDim.x / 32;
    float v = 0.0f;
    for (int r = threadIdx.x; r < N; r += blockDim.x) v += x[r * C + c];
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffff, v, off);
    if (lane == 0) part[wid] = v;
    __syncthreads();
    v = (lane < nw) ? part[lane] : 0.0f;
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffff, v, off);
    if (threadIdx.x == 0) y[c] = v;
}"""
_WARP_ROWS = """
__global__ void k(float* y, const float* x, int N, int C) {
    extern __shared__ float acc[];
    int lane = threadIdx.x % 32;
    int w = threadIdx.x / 32;
    int step = blockDim.x / 32;
    int col = blockIdx.x * 32 + lane;
    float s = 0.0f;
    for (int r = w; r < N; r += step) s += x[r * C + col];
    acc[w * 32 + lane] = s;
    __syncthreads();
    if (w == 0) {
        float t = 0.0f;
        for (int j = 0; j < step; j++) t += acc[j * 32 + lane];
        y[col] = t;
    }
}"""
_PARTIALS_LOOP = """
__global__ void k(float* y, const float* x, int N, int C) {
    __shared__ float sums[32];
    int c = blockIdx.x;
    float v = 0.0f;
    for (int r = threadIdx.x; r < N; r += blockDim.x) v += x[r * C + c];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    if (threadIdx.x % 32 == 0) sums[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.0f;
        for (int w = 0; w < blockDim.x / 32; ++w) t += sums[w];
        y[c] = 2.0f * t;
    }
}"""


def _bind(grid: str, cols: int, smem: int = 0) -> dict:
    launch: dict = {"grid": [grid], "block": [32]}
    if smem:
        launch["shared_bytes"] = smem
    return {
        "launch": launch,
        "params": {
            "y": {"shape": ["C"], "dtype": "float32", "role": "out"},
            "x": {"shape": ["N", "C"], "dtype": "float32", "role": "in"},
            "N": 300,
            "C": cols,
        },
        "check": {"shapes": [{"N": 129, "C": 96}, {"N": 7, "C": 32}]},
    }


CASES = {
    "shuffle_two_stages": (_SHUFFLE_TWO_STAGES, _bind("C", 40)),
    "warp_rows": (_WARP_ROWS, _bind("C / 32", 64, 128)),
    "partials_loop": (_PARTIALS_LOOP, _bind("C", 40)),
}


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_one_warp_block_sums_port_as_column_sums(name, target, tmp_path) -> None:
    src, bind = CASES[name]
    res, run, points = port_variant(f"unit/{name}", src, bind, target, tmp_path, tol=1e-4)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    assert any(isinstance(x, Matmul) for x in nodes(res.ir_tiles)), "not a column sum"
