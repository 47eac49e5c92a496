"""Pointers moved by a thread's index that is no affine form in the literal lowering: a row
pointer ``in + (t * B + b) * C`` with ``b = i / T`` and ``t = i % T`` (or a product of two such
coordinates) reads each thread's row through an int32 address tile, as a gather from data does;
such kernels were refused as if the offset came from data."""

from __future__ import annotations

import pytest

from tests.port.test_literal import _kernel, _matches

_PARAMS = (
    'x = { shape = ["T", "B", "C"], dtype = "float32", role = "in" }\n'
    'y = { shape = ["B", "T", "C"], dtype = "float32", role = "out" }\n'
    "B = 3\nT = 40\nC = 5"
)

KERNELS = {
    # a row pointer of the input, read by a channel loop
    "read_row_pointer": """
__global__ void k(const float* x, float* y, int B, int T, int C) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < B * T) {
        int b = i / T;
        int t = i % T;
        const float* src = x + (t * B + b) * C;
        for (int c = 0; c < C; c++) y[i * C + c] = 2.0f * src[c];
    }
}
""",
    # a pointer walked by increments, an early return, the coordinates the other way round
    "read_pointer_increment": """
__global__ void k(const float* x, float* y, int B, int T, int C) {
    int r = threadIdx.x + blockIdx.x * blockDim.x;
    if (r >= B * T) return;
    int b = r / T, t = r - b * T;
    const float* p = x + t * B * C + b * C;
    for (int c = 0; c < C; ++c) { y[r * C + c] = *p - 0.5f; p++; }
}
""",
    # two row pointers of one input, the second at the first batch of the same position
    "two_rows": """
__global__ void k(const float* x, float* y, int B, int T, int C) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < B * T) {
        int t = i % T;
        const float* own = x + (t * B + i / T) * C;
        const float* first = x + t * B * C;
        for (int c = 0; c < C; c++) y[i * C + c] = own[c] - first[c];
    }
}
""",
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_row_pointers_moved_by_divided_indices(tmp_path, name):
    cu = _kernel(tmp_path, KERNELS[name], "k", '"ceil_div(B * T, 64)"', "64", _PARAMS,
                 ["B = 1\nT = 3\nC = 7", "B = 5\nT = 29\nC = 2"])  # fmt: skip
    _matches(cu, tmp_path)
