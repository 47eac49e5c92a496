"""Thread blocks taller than the partition count (``blockDim.y`` > 128) in literal ports: the
block's columns go on partitions and its rows along the free axis (thread x = partition, thread
y = free index), so elementwise kernels, shared-memory trees over ``threadIdx.y`` and 2-D
shared tiles port and match the SIMT interpreter."""

from __future__ import annotations

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.pipeline import port_file
from tests.port.acceptance import run_against_simt, tensor_param

_ELEMENTWISE = """__global__ void k(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows && c < cols) y[r * cols + c] = 2.0f * x[r * cols + c] + (float)r;
}
"""

_COLUMN_TREE = """__global__ void k(const float* x, float* y, int rows, int cols) {
    __shared__ float part[TALL];
    int col = blockIdx.x;
    float acc = 0.0f;
    for (int r = threadIdx.y; r < rows; r += blockDim.y) acc += x[r * cols + col];
    part[threadIdx.y] = acc;
    __syncthreads();
    for (int stride = blockDim.y / 2; stride > 0; stride >>= 1) {
        if (threadIdx.y < stride) part[threadIdx.y] += part[threadIdx.y + stride];
        __syncthreads();
    }
    if (threadIdx.y == 0) y[col] = part[0];
}
"""

_SHARED_TILE = """__global__ void k(const float* x, float* y, int rows, int cols) {
    __shared__ float tile[256][4];
    int tx = threadIdx.x, ty = threadIdx.y;
    int r = blockIdx.y * 256 + ty, c = blockIdx.x * 4 + tx;
    tile[ty][tx] = (r < rows && c < cols) ? x[r * cols + c] : 0.0f;
    __syncthreads();
    float up = ty > 0 ? tile[ty - 1][tx] : 0.0f;
    if (r < rows && c < cols) y[r * cols + c] = tile[ty][tx] - up + tile[ty][3 - tx];
}
"""


def _binding(block: list[int], grid: list[str], out: list[str]) -> dict:
    return {
        "kernel": "k",
        "launch": {"grid": grid, "block": block},
        "params": {
            "x": tensor_param(["rows", "cols"], "in"),
            "y": tensor_param(out, "out"),
            "rows": 600,
            "cols": 9,
        },
        "check": {"shapes": [{"rows": 600, "cols": 9}, {"rows": 130, "cols": 3}]},
    }


KERNELS = [
    ("elementwise_2x256", _ELEMENTWISE, [2, 256], ["ceil_div(cols, 2)", "ceil_div(rows, 256)"],
     ["rows", "cols"]),
    ("elementwise_1x512", _ELEMENTWISE, [1, 512], ["cols", "ceil_div(rows, 512)"],
     ["rows", "cols"]),
    ("column_tree_1x256", _COLUMN_TREE.replace("TALL", "256"), [1, 256], ["cols"], ["cols"]),
    ("column_tree_1x1024", _COLUMN_TREE.replace("TALL", "1024"), [1, 1024], ["cols"], ["cols"]),
    ("shared_tile_4x256", _SHARED_TILE, [4, 256], ["ceil_div(cols, 4)", "ceil_div(rows, 256)"],
     ["rows", "cols"]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "src", "block", "grid", "out"), KERNELS,
                         ids=[k[0] for k in KERNELS])  # fmt: skip
def test_tall_blocks_port_literally(name, src, block, grid, out, tmp_path) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    binding = binding_from_dict(_binding(block, grid, out), path=str(cu))
    res = port_file(cu, binding=binding, target="nki", lowering="literal")
    assert res.source is not None and res.literal, [d.message for d in res.diagnostics]
    port = tmp_path / f"{name}.py"
    port.write_text(res.source)
    run = run_against_simt(res, binding, port, points=binding.test_points(), rtol=1e-5, atol=1e-5)
    assert len(run.points) >= 2 and not run.mismatches, run.mismatches
