"""Local arrays passed to device functions in the literal lowering: the callee's parameter
(``int t[N][2]``, ``float* row``, ``const float r[]``) names the caller's array, so the callee
reads and writes the caller's elements; a post-incremented argument passes the value before
the step.  The ports match the SIMT interpreter."""

from __future__ import annotations

import pytest

from tests.port.test_literal import _kernel, _matches

_PARAMS = (
    'out = { shape = ["n"], dtype = "float32", role = "out" }\n'
    'x = { shape = ["n"], dtype = "float32", role = "in", range = [-1, 1] }\n'
    "n = 150"
)

KERNELS = {
    # a 2-D table filled row by row by a helper, read back at a data-chosen row
    "table_filled_by_a_helper": """
#define ROWS 6
__device__ void set_row(int t[ROWS][2], int r, int a, int b) { t[r][0] = a; t[r][1] = b; }
__global__ void arrs(float* out, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int t[ROWS][2];
    int k = 0;
    for (int r = 0; r < ROWS; r++) set_row(t, k++, 3 * r, ROWS - r);
    int pick = ((int)fabsf(x[i] * 10.0f)) % ROWS;
    out[i] = (float)(t[pick][0] - t[pick][1]);
}
""",
    # a per-thread vector read by a helper taking a pointer, at a lane-dependent slot
    "pointer_parameter_reads": """
__device__ float at(const float* v, int k) { return v[k % 3]; }
__global__ void arrs(float* out, const float* x, int n) {
    int g = threadIdx.x + blockIdx.x * blockDim.x;
    float w[3];
    for (int c = 0; c < 3; ++c) w[c] = (g < n ? x[g] : 0.0f) * (float)(c + 1);
    if (g < n) out[g] = at(w, g) + at(w, 2);
}
""",
    # a helper writing through an unsized array parameter, then summing it
    "helper_writes_then_sums": """
__device__ void fill(float r[], float v) { for (int j = 0; j < 4; ++j) r[j] = v * j; }
__device__ float total(const float r[4]) { float s = 0.0f; for (int j = 0; j < 4; ++j) s += r[j]; return s; }
__global__ void arrs(float* out, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float r[4]; fill(r, x[i]); out[i] = total(r) - r[3]; }
}
""",
    # a post-incremented counter as an argument: the callee gets the value before the step
    "post_increment_argument": """
__device__ float scaled(float v, int k) { return v * (float)(k + 1); }
__global__ void arrs(float* out, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int k = 0;
    float s = 0.0f;
    for (int r = 0; r < 3; ++r) s += scaled(x[i], k++);
    out[i] = s + (float)k;
}
""",
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_local_arrays_passed_to_helpers_port(tmp_path, name):
    cu = _kernel(tmp_path, KERNELS[name], "arrs", '"ceil_div(n, 64)"', "64", _PARAMS,
                 ["n = 1", "n = 65"])  # fmt: skip
    _matches(cu, tmp_path)
