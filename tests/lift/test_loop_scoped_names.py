"""A name a ``for`` loop declares lives in that loop only: a later declaration of the same name
outside the loop is a fresh local whose value the index analysis follows (the tail of a
vectorised reduction, ``int i = idx + n / 2 * 2; if (i < n) ... in[i]``)."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

#: vector loads over whole pairs, then the odd tail element, both spelled with ``i``
PAIRS = """
__global__ void pair_sum(int* src, int* total, int n) {
    int acc = 0;
    int first = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = first; i < n / 2; i += blockDim.x * gridDim.x) {
        int2 v = reinterpret_cast<int2*>(src)[i];
        acc += v.x + v.y;
    }
    int i = first + n / 2 * 2;
    if (i < n) acc += src[i];
    atomicAdd(total, acc);
}
void go(int* src, int* total, int n) {
    int t = 128;
    pair_sum<<<min((n / 2 + t - 1) / t, 1024), t>>>(src, total, n);
}
"""

#: four-wide float loads, the loop counter re-declared as ``k`` for the scalar remainder
QUADS = """
__global__ void quad_max(const float* vals, float* best, int count) {
    float m = -1e30f;
    int g = threadIdx.x + blockIdx.x * blockDim.x;
    for (int k = g; k < count / 4; k += gridDim.x * blockDim.x) {
        float4 q = reinterpret_cast<const float4*>(vals)[k];
        m = fmaxf(m, fmaxf(fmaxf(q.x, q.y), fmaxf(q.z, q.w)));
    }
    int k = count / 4 * 4 + g;
    if (k < count) m = fmaxf(m, vals[k]);
    best[g] = m;
}
void go(const float* vals, float* best, int count) {
    quad_max<<<8, 256>>>(vals, best, count);
}
"""

#: a scalar grid-stride loop, then a second pass whose counter takes the same name
TWO_PASSES = """
__global__ void two_passes(float* y, const float* x, int len) {
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < len; j += blockDim.x * gridDim.x)
        y[j] = x[j] * 2.0f;
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < len) y[j] += 1.0f;
}
void go(float* y, const float* x, int len) {
    two_passes<<<(len + 255) / 256, 256>>>(y, x, len);
}
"""


@pytest.mark.parametrize(
    ("src", "kernel", "ptr", "size"),
    [
        (PAIRS, "pair_sum", "src", "n"),
        (QUADS, "quad_max", "vals", "count"),
        (TWO_PASSES, "two_passes", "x", "len"),
    ],
)
def test_redeclared_loop_counter_is_a_fresh_local(
    src: str, kernel: str, ptr: str, size: str
) -> None:
    partial, diags = infer_binding(parse_source(src, "k.cu"), kernel)
    spec = partial["params"][ptr]
    assert spec.get("shape") == [size], diags
    assert spec["role"] == "in"
    assert not [d for d in diags if d.code == "C2N2101" and f"'{ptr}'" in d.message], diags
