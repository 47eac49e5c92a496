"""Kernels computing with vector and record values lift through the recognisers: ``float2/3/4``
locals, user structs and typedef'd records, device functions taking them by value or by (const)
reference and writing reference outputs, arrays of records in global and shared memory.  The
lifter splits the values into their lanes first (a record array ``p[i].f`` is element
``[i, f]`` of an ``[n, fields]`` tensor); each kernel is claimed by a recogniser, with the
binding inferred from the host code, and its port computes what the CUDA kernel computes."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki import api
from cuda2nki.frontend import parse_source
from cuda2nki.ir.printer import to_text

#: name -> (kernel, CUDA source with its launcher, text the intent IR contains)
KERNELS: dict[str, tuple[str, str, str]] = {
    "float3_reference_outputs": (
        "luma",
        """
__device__ void unpack_rgb(const float* planes, int i, int n, float3& c) {
    c.x = planes[i];
    c.y = planes[n + i];
    c.z = planes[2 * n + i];
}
__device__ inline void scale_rgb(const float3& in, float s, float3& out) {
    out.x = in.x * s;
    out.y = in.y * s;
    out.z = in.z * s;
}
__global__ void luma(const float* planes, float* y, float gain, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float3 c;
        unpack_rgb(planes, i, n, c);
        float3 g;
        scale_rgb(c, gain, g);
        y[i] = 0.299f * g.x + 0.587f * g.y + 0.114f * g.z;
    }
}
void run(const float* planes, float* y, float gain, int n) {
    luma<<<(n + 127) / 128, 128>>>(planes, y, gain, n);
}
""",
        "y[i] =",
    ),
    "float4_reference_and_result": (
        "clamp_pixels",
        """
__device__ float clamp_rgba(float4& p, float lo, float hi) {
    p.x = fminf(fmaxf(p.x, lo), hi);
    p.y = fminf(fmaxf(p.y, lo), hi);
    p.z = fminf(fmaxf(p.z, lo), hi);
    return p.w * 0.5f;
}
__global__ void clamp_pixels(float4* px, float* alpha, int n) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i >= n) return;
    float4 p = px[i];
    alpha[i] = clamp_rgba(p, 0.0f, 1.0f);
    px[i] = p;
}
void run(float4* px, float* alpha, int n) {
    clamp_pixels<<<(n + 255) / 256, 256>>>(px, alpha, n);
}
""",
        "px[i, 3]",
    ),
    "struct_by_value_into_a_struct_reference": (
        "relax_springs",
        """
struct Spring {
    float stiff;
    float rest;
    float len;
};
__device__ void relax(Spring s, float rate, Spring& out) {
    out = s;
    out.len = s.len - rate * (s.len - s.rest);
}
__global__ void relax_springs(const Spring* in, Spring* out, float rate, int m) {
    int j = blockIdx.x * 256 + threadIdx.x;
    if (j < m) {
        Spring r;
        relax(in[j], rate, r);
        out[j] = r;
    }
}
void run(const Spring* in, Spring* out, float rate, int m) {
    relax_springs<<<(m + 255) / 256, 256>>>(in, out, rate, m);
}
""",
        "rate * (in[k, 2] - in[k, 1])",
    ),
    "typedef_records_staged_in_shared": (
        "swap_pairs",
        """
typedef struct {
    float a, b;
} Pair;
__global__ void swap_pairs(Pair* dst, const Pair* src, int n) {
    __shared__ Pair stage[64];
    int t = threadIdx.x;
    int g = blockIdx.x * 64 + t;
    if (g < n) stage[t] = src[g];
    __syncthreads();
    if (g < n) {
        Pair p;
        p.a = stage[t].b;
        p.b = stage[t].a * 2.0f;
        dst[g] = p;
    }
}
void run(Pair* dst, const Pair* src, int n) {
    swap_pairs<<<(n + 63) / 64, 64>>>(dst, src, n);
}
""",
        "dst[i, 0] = src[i, 1]",
    ),
    "record_pointer_to_device_function_grid_stride": (
        "radii",
        """
typedef struct point3 {
    float x;
    float y;
    float z;
} Point3;
__device__ void centre_offset(const struct point3* p, Point3 c, float& r) {
    Point3 d = {p->x - c.x, p->y - c.y, p->z - c.z};
    r = sqrtf(d.x * d.x + d.y * d.y + d.z * d.z);
}
__global__ void radii(const Point3* pts, float* r, int count, float cx, float cy) {
    Point3 c = {cx, cy, 0.0f};
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < count; k += blockDim.x * gridDim.x) {
        float d;
        centre_offset(&pts[k], c, d);
        r[k] = d;
    }
}
void run(const Point3* pts, float* r, int count, float cx, float cy) {
    radii<<<32, 128>>>(pts, r, count, cx, cy);
}
""",
        "pts[i, 2]",
    ),
}


@pytest.mark.parametrize("case", sorted(KERNELS))
def test_record_kernels_lift_through_a_recogniser(case: str) -> None:
    kernel, src, want = KERNELS[case]
    got = api.lift(parse_source(src, f"{case}.cu"), kernel)
    assert got.claimed, [d.message for d in got.diagnostics]
    text = to_text(got.intent, locs=False)
    assert want in text, text


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(KERNELS))
def test_record_kernel_ports_match_the_cuda_kernel(case: str, tmp_path: Path) -> None:
    kernel, src, _ = KERNELS[case]
    cu = tmp_path / f"{case}.cu"
    cu.write_text(src)
    res = api.port(cu, kernel=kernel)
    assert res.source is not None and not res.literal, [d.message for d in res.diagnostics]
    port = tmp_path / f"{case}_port.py"
    port.write_text(res.source)
    rep = api.check(cu, port, kernel=kernel, seeds=1)
    assert rep.verdict == "pass", [n for n in rep.numerics if n.get("classification")]
