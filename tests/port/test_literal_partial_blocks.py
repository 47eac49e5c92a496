"""Literal ports move the in-bound part of a partial block's view by one DMA per band of
partitions, not one per partition: the last block of a grid that overshoots the data (a guard
``i < n``, a grid-stride loop, an early return, 2-D blocks ragged in rows) reads and writes its
threads' elements with as few DMAs as a full block.  Numbers match the SIMT interpreter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.port.test_literal import _kernel, _matches
from tests.port.test_literal_runs import _dma_loads

#: name -> (source, grid, block, params, points, inputs of the counted run, input DMAs expected)
CASES = {
    "guard_neighbours": (
        """
__global__ void diff(const float* edge, float* width, int cells) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < cells) width[i] = edge[i + 1] - edge[i];
}
""",
        '"ceil_div(cells, 128)"',
        "128",
        'edge = { shape = ["cells + 1"], dtype = "float32", role = "in" }\n'
        'width = { shape = ["cells"], dtype = "float32", role = "out" }\ncells = 300',
        ["cells = 77"],
        {"edge": np.arange(301, dtype=np.float32)},
        4,  # one batch of the grid's blocks (128 x 8 threads): 2 views x 2 bands (37 full
        # partition rows, then the 4 threads of the 38th), not one DMA per partition
    ),
    "reversed_rows": (
        """
__global__ void rev(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[n - 1 - i] = x[n - 1 - i] * 2.0f + x[i];
}
""",
        '"ceil_div(n, 128)"',
        "128",
        'x = { shape = ["n"], dtype = "float32", role = "in" }\n'
        'y = { shape = ["n"], dtype = "float32", role = "out" }\nn = 300',
        ["n = 77"],
        {"x": np.arange(300, dtype=np.float32)},
        4,  # one batch of the grid's blocks: 2 views x 2 bands, one walking down the partitions
    ),
    "grid_stride_pairs": (
        """
__global__ void halves(const int* pairs, int* out, int m) {
    for (int j = threadIdx.x + blockIdx.x * blockDim.x; j < m; j += blockDim.x * gridDim.x)
        out[j] = pairs[2 * j + 1] - pairs[2 * j];
}
""",
        "2",
        "64",
        'pairs = { shape = ["m", 2], dtype = "int32", role = "in" }\n'
        'out = { shape = ["m"], dtype = "int32", role = "out" }\nm = 200',
        ["m = 50"],
        {"pairs": np.arange(400, dtype=np.int32).reshape(200, 2)},
        4,  # the grid's 128 threads batched in one tile: 2 passes x 2 views (the second pass
        # holds 72 threads: one band)
    ),
    "early_return_rows": (
        """
__global__ void scale_rows(const float* src, float* dst, int h, int w) {
    int c = threadIdx.x + blockIdx.x * blockDim.x;
    int r = threadIdx.y + blockIdx.y * blockDim.y;
    if (r >= h || c >= w) return;
    dst[r * w + c] = 3.0f * src[r * w + c] + src[c];
}
""",
        '"ceil_div(w, 16)", "ceil_div(h, 16)"',
        "16, 16",
        'src = { shape = ["h", "w"], dtype = "float32", role = "in" }\n'
        'dst = { shape = ["h", "w"], dtype = "float32", role = "out" }\nh = 40\nw = 32',
        ["h = 21\nw = 16"],
        {"src": np.arange(40 * 32, dtype=np.float32).reshape(40, 32)},
        12,  # 6 blocks x 2 views (rows 32..39 of the last block row: one band)
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_partial_block_moves_its_rows_in_bands(tmp_path: Path, name: str) -> None:
    from cuda2nki import api

    src, grid, block, params, points, inputs, expected = CASES[name]
    kernel = src.split("void ", 1)[1].split("(", 1)[0]
    cu = _kernel(tmp_path, src, kernel, grid, block, params, points)
    _matches(cu, tmp_path)
    port = api.port(cu, lowering="literal").source
    assert port is not None
    assert _dma_loads(port, inputs) == expected
