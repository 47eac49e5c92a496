"""A thread's local array passed to a device function as a pointer, read at a uniform index
while only some threads of the block are active (a partial last block)."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.simt import run_kernel

SRC = """
__device__ float at(const float* v, int k) { return v[k % 3]; }
__global__ void arrs(float* out, const float* x, int n) {
    int g = threadIdx.x + blockIdx.x * blockDim.x;
    float w[3];
    for (int c = 0; c < 3; ++c) w[c] = (g < n ? x[g] : 0.0f) * (float)(c + 1);
    if (g < n) out[g] = at(w, g) + at(w, 2);
}
"""


@pytest.mark.parametrize("n", [1, 37, 64, 65])
def test_uniform_read_through_a_pointer_to_a_local_array(n: int) -> None:
    tu = parse_source(SRC, "k.cu")
    x = np.linspace(-1, 1, n).astype(np.float32)
    args = {"out": np.zeros(n, np.float32), "x": x, "n": n}
    out = run_kernel(tu, "arrs", grid=((n + 63) // 64,), block=(64,), args=args)["out"]
    g = np.arange(n)
    np.testing.assert_array_equal(out, x * (g % 3 + 1).astype(np.float32) + x * np.float32(3))


POST = """
__device__ float scaled(float v, int k) { return v * (float)(k + 1); }
__global__ void post(float* out, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int k = 0;
    float s = 0.0f;
    for (int r = 0; r < 3; ++r) s += scaled(x[i], k++);
    int* q = &k;
    int* p = q++;
    out[i] = s + (float)k + (float)(p == &k);
}
"""


@pytest.mark.parametrize("n", [1, 37, 64])
def test_a_post_increment_yields_the_value_before_the_step(n: int) -> None:
    tu = parse_source(POST, "k.cu")
    x = np.linspace(-1, 1, n).astype(np.float32)
    args = {"out": np.zeros(n, np.float32), "x": x, "n": n}
    out = run_kernel(tu, "post", grid=((n + 63) // 64,), block=(64,), args=args)["out"]
    s = np.zeros(n, np.float32)
    for k in range(3):
        s = s + x * np.float32(k + 1)
    np.testing.assert_array_equal(out, s + np.float32(3) + np.float32(1))
