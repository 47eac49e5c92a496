"""Brace lists passed to and returned from functions; members of a local vector reached through a reference or pointer to it (``float3& m`` in a
``__device__`` function, ``m.y = ...``, ``p->z``): each reads and writes that lane only."""

from __future__ import annotations

import numpy as np
from simt_helpers import run

SRC = """
__device__ void scale(float& d, float3& m, float3& v) {
    v.x = m.x / d; v.y = m.y * d; v.z = m.z - d;
}
__device__ void bump(float4* p) { p->y += 1.0f; p->w = p->x; }
__device__ float sum3(const float3& v) { return v.x + v.y + v.z; }
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float d = x[i] + 2.0f;
    float3 m = make_float3(x[n + i], x[2 * n + i], x[3 * n + i]);
    float3 v;
    scale(d, m, v);
    float4 q = make_float4(v.x, v.y, v.z, 0.0f);
    if (i % 2 == 0) bump(&q);
    y[i] = q.x; y[n + i] = q.y; y[2 * n + i] = q.w; y[3 * n + i] = sum3(v);
}
"""


def test_lanes_through_references_and_pointers_to_local_vectors() -> None:
    n = 40
    x = np.random.default_rng(3).standard_normal(4 * n).astype(np.float32)
    out = run(SRC, grid=(2,), block=(32,), x=x, y=np.zeros(4 * n, np.float32), n=n)
    d = x[:n] + np.float32(2.0)
    vx, vy, vz = x[n : 2 * n] / d, x[2 * n : 3 * n] * d, x[3 * n :] - d
    even = np.arange(n) % 2 == 0
    np.testing.assert_array_equal(out["y"][:n], vx)
    np.testing.assert_array_equal(out["y"][n : 2 * n], np.where(even, vy + np.float32(1), vy))
    np.testing.assert_array_equal(out["y"][2 * n : 3 * n], np.where(even, vx, np.float32(0)))
    np.testing.assert_array_equal(out["y"][3 * n :], (vx + vy) + vz)


BRACES = """
struct Pair { float a; float b; };
__device__ Pair swap_scale(Pair p, float s) { return {p.b * s, p.a}; }
__global__ void k(const float* x, float* y, int n) {
    int i = threadIdx.x;
    if (i < n) {
        Pair q = swap_scale({x[i], 2.0f}, 3.0f);
        y[i] = q.a - q.b;
    }
}
"""


def test_brace_lists_as_arguments_and_return_values() -> None:
    x = np.arange(8, dtype=np.float32)
    out = run(BRACES, grid=(1,), block=(8,), x=x, y=np.zeros(8, np.float32), n=8)
    np.testing.assert_array_equal(out["y"], np.float32(6.0) - x)
