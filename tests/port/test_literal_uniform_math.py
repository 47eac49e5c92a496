"""Math functions of uniform values in the literal lowering are computed when the kernel is
traced (:mod:`cuda2nki.lift.literal.unimath`), so that a loop bounded by one (``i <=
__log2f(H)``) stays a trace-time loop; the ports match the SIMT interpreter."""

from __future__ import annotations

import pytest

from tests.port.test_literal import _kernel, _matches

KERNELS = {
    # a tree sum over the rows of a 2-D block, bounded by __log2f, strides from __powf
    "tree_rows_log2_pow": (
        """
#define H 16
__global__ void fold(float* out, const float* in) {
    int tx = threadIdx.x, ty = threadIdx.y;
    __shared__ float w[H][H];
    w[ty][tx] = in[(blockIdx.x * H + ty) * H + tx];
    __syncthreads();
    for (int i = 1; i <= __log2f(H); i++) {
        int p = __powf(2, i);
        if (ty % p == 0) w[ty][tx] = w[ty][tx] + w[ty + p / 2][tx];
        __syncthreads();
    }
    out[(blockIdx.x * H + ty) * H + tx] = w[ty][tx];
}
""",
        '"n"',
        "16, 16",
        'out = { shape = ["n", 16, 16], dtype = "float32", role = "out" }\n'
        'in = { shape = ["n", 16, 16], dtype = "float32", role = "in" }\nn = 2',
        ["n = 1", "n = 3"],
    ),
    # levels of a 1-D sweep from a parameter: log2f of a size, exp2f of the level
    "levels_from_a_parameter": (
        """
__global__ void fold(float* out, const float* in, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    float acc = in[t];
    int levels = (int)log2f((float)n);
    for (int lvl = 0; lvl < levels; ++lvl) {
        int stride = (int)exp2f((float)lvl);
        if (t + stride < n) acc += 0.5f * in[t + stride];
    }
    out[t] = acc;
}
""",
        '"ceil_div(n, 64)"',
        "64",
        'out = { shape = ["n"], dtype = "float32", role = "out" }\n'
        'in = { shape = ["n"], dtype = "float32", role = "in" }\nn = 100',
        ["n = 2", "n = 65"],
    ),
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_uniform_math_bounds_port(tmp_path, name):
    src, grid, block, params, shapes = KERNELS[name]
    cu = _kernel(tmp_path, src, "fold", grid, block, params, shapes)
    _matches(cu, tmp_path)
