"""Half-precision arithmetic converted to fp32 (``__half2float(__hmul(a, b))``,
``__half22float2(__hmul2(x, y))``, ``(float)(a * b)``): CUDA rounds the half result before it
widens -- a product past 65504 is inf, others lose their low bits -- so the port rounds the
fp32 value its engines computed to half before the widening (free otherwise).  Ported on both
targets, compared with the SIMT interpreter on inputs whose products overflow half."""

from __future__ import annotations

import pytest

from tests.port.acceptance import grid_binding as _b
from tests.port.acceptance import port_variant
from tests.port.acceptance import tensor_param as _t

BIG = [-400, 400]  # products up to 1.6e5: past half's 65504

VARIANTS = [
    (
        "half/hmul_to_float",
        """
#include <cuda_fp16.h>
__global__ void k(const half* a, const half* b, float* z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = __half2float(__hmul(a[i], b[i]));
}""",
        "float16",
    ),
    (
        "half/hmul2_pairs_grid_stride",
        """
#include <cuda_fp16.h>
__global__ void k(half* x, half* y, float* z, int n) {
    half2* x2 = reinterpret_cast<half2*>(x);
    half2* y2 = reinterpret_cast<half2*>(y);
    float2* z2 = reinterpret_cast<float2*>(z);
    for (int e = blockIdx.x * blockDim.x + threadIdx.x; e < n / 2; e += gridDim.x * blockDim.x)
        z2[e] = __half22float2(__hmul2(y2[e], x2[e]));
}""",
        "float16",
    ),
    (
        "half/operator_sum_cast",
        """
#include <cuda_fp16.h>
__global__ void k(const half* a, const half* b, float* z, int n) {
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    if (t >= n) return;
    half s = a[t] * b[t] + a[t];
    z[t] = (float)s;
}""",
        "float16",
    ),
    (
        "half/bf16_hmul_to_float",
        """
#include <cuda_bf16.h>
__global__ void k(const __nv_bfloat16* a, const __nv_bfloat16* b, float* z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = __bfloat162float(__hmul(a[i], b[i]));
}""",
        "bfloat16",
    ),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("vid", "src", "dt"), VARIANTS, ids=[v[0] for v in VARIANTS])
def test_half_results_round_before_widening(vid, src, dt, target, tmp_path) -> None:
    names = ("x", "y") if "hmul2" in vid else ("a", "b")
    params = {names[0]: _t(["n"], "in", dt, BIG), names[1]: _t(["n"], "in", dt, BIG)}
    params.update({"z": _t(["n"], "out"), "n": 1000})
    bind = _b(["ceil_div(n, 128)"], params, [{"n": 258}, {"n": 2000}])
    _, run, points = port_variant(vid, src, bind, target, tmp_path, tol=0.0, literal_ok=True)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
