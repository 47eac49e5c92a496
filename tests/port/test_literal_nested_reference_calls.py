"""A device function that passes its own locals by reference (or by address) to another one,
itself called for its value: the literal lowering's scalarisation
(:mod:`cuda2nki.lift.literal.scalarise`) clones the outer function so the inner call is inlined
with the references aliasing the outer function's locals.  Spellings: an extended Euclid with
two reference outputs under a data-dependent loop, an explicit ``&local`` to a pointer
parameter, a chain of three functions, a void outer function writing memory.  The ports match
the SIMT interpreter bit for bit."""

from __future__ import annotations

import pytest

from tests.port.literal_acceptance import run_flat_kernel_exactly

_HEAD = "__global__ void k(const float* x, float* y, int n, int reach) {\n"

KERNELS = [
    ("euclid_reference_outputs", [64], """
__device__ int egcd(int a, int b, int& u, int& v) {
    u = 1, v = 0;
    int u1 = 0, v1 = 1, a1 = a, b1 = b;
    while (b1) {
        int q = a1 / b1, t;
        t = u - q * u1; u = u1; u1 = t;
        t = v - q * v1; v = v1; v1 = t;
        t = a1 - q * b1; a1 = b1; b1 = t;
    }
    return a1;
}
__device__ int inverse(int a, int m) {
    int s, t;
    egcd(a, m, s, t);
    return s < 0 ? s + m : s;
}
""", """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int a = 1 + (int)((x[t] + 2.0f) * 20.0f);
    y[t] = (float)inverse(a, 97 + reach * 0);
}"""),
    ("explicit_address_to_a_pointer", [32, 2], """
__device__ void split(float v, float* hi, float* lo) {
    *hi = floorf(v);
    *lo = v - *hi;
}
__device__ float mix(float v, float w) {
    float h, l;
    split(v * w, &h, &l);
    return h * 0.5f + l;
}
""", """
    int t = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    if (t >= n) return;
    y[t] = mix(x[t], (float)reach) - mix(x[(t + 1) % n], 1.5f);
}"""),
    ("three_levels_and_a_void_outer", [128], """
__device__ void bump(float& acc, float d) { acc += d * d; }
__device__ float sum3(const float* v, int i, int n) {
    float s = 0.0f;
    for (int d = 0; d < 3; ++d) bump(s, v[(i + d) % n]);
    return s;
}
__device__ void store(float* out, const float* v, int i, int n) {
    float r = sum3(v, i, n);
    out[i] = r;
}
""", """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) store(y, x, t, n);
}"""),
]  # fmt: skip


@pytest.mark.parametrize(("name", "block", "before", "body"), KERNELS, ids=[k[0] for k in KERNELS])
@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_nested_reference_calls_port_exactly(name, block, before, body, target, tmp_path) -> None:
    if target == "legacy" and "while (b1)" in before:
        pytest.skip("the legacy API has no runtime loop for a trip count set by data")
    cu = tmp_path / f"{name}.cu"
    cu.write_text(before + _HEAD + body)
    run, points = run_flat_kernel_exactly(cu, block, target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
