"""Local arrays indexed by a per-thread value in the literal lowering: a read selects each
thread's element, a write updates the element each thread names
(:mod:`cuda2nki.lift.literal.lanearray`); the ports match the SIMT interpreter."""

from __future__ import annotations

import pytest

from tests.port.literal_acceptance import check_literal
from tests.port.test_literal import _kernel, _matches

_PARAMS = (
    'out = { shape = ["n"], dtype = "float32", role = "out" }\n'
    'x = { shape = ["n", 8], dtype = "float32", role = "in", range = [0, 1] }\n'
    "n = 150"
)

KERNELS = {
    # accumulate into a slot chosen by the thread index, read another slot back
    "slot_by_thread_index": """
__global__ void lanes(float* out, const float* x, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int j = 0; j < 8; j++) acc[(t + j) % 4] += x[t * 8 + j] * (float)(j + 1);
    out[t] = acc[t % 4] - 0.5f * acc[(t + 1) & 3];
}
""",
    # a per-thread register histogram: bins chosen by data, counted with ++
    "bins_by_data": """
__global__ void lanes(float* out, const float* x, int n) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    int bins[5];
    for (int b = 0; b < 5; ++b) bins[b] = 0;
    if (i < n) {
        for (int j = 0; j < 8; ++j) {
            int k = (int)(x[i * 8 + j] * 5.0f);
            if (k > 4) k = 4;
            bins[k]++;
        }
        int most = 0;
        for (int b = 1; b < 5; ++b) if (bins[b] > bins[most]) most = b;
        out[i] = (float)(most * 10 + bins[most]);
    }
}
""",
    # a 2-D register tile: the row by a lane, the column uniform, read under a lane guard
    "row_by_lane_in_a_2d_array": """
__global__ void lanes(float* out, const float* x, int n) {
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32;
    float m[2][3];
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 3; c++)
            m[r][c] = (g < n) ? x[g * 8 + r * 3 + c] : 0.0f;
    float s = 0.0f;
    if (lane < 2) {
        for (int c = 0; c < 3; c++) s += m[lane][c];
    } else {
        s = m[lane % 2][lane % 3];
    }
    if (g < n) out[g] = s;
}
""",
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_lane_indexed_local_arrays_port(tmp_path, name):
    cu = _kernel(tmp_path, KERNELS[name], "lanes", '"ceil_div(n, 64)"', "64", _PARAMS,
                 ["n = 1", "n = 65"])  # fmt: skip
    _matches(cu, tmp_path)


def test_large_local_arrays_indexed_per_thread_are_refused(tmp_path):
    src = """
__global__ void lanes(float* out, const float* x, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float big[100];
    for (int j = 0; j < 100; j++) big[j] = (float)j;
    if (t < n) out[t] = big[t % 100] + x[t * 8];
}
"""
    cu = _kernel(tmp_path, src, "lanes", '"ceil_div(n, 64)"', "64", _PARAMS)
    out = check_literal(cu, tmp_path, lowering="literal")
    assert out.status == "refused", out
    assert "local array of 100 elements" in out.detail, out.detail
