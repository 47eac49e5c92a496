"""Vector texels port: a fetch of a ``float4`` / ``float2`` / ``uchar4`` / ``short2`` texture
reads the texture lane by lane with the same addressing and filtering as a scalar one, and a
texture read as ``cudaReadModeNormalizedFloat`` turns its 8/16-bit integer texels into floats
in [0, 1] (unsigned) or [-1, 1] (signed).  Each spelling ports from its inferred binding and our
own ``check`` finds its numbers equal to the interpreter's, on both targets: object and
reference APIs, 1-D fetches and 2-D filtered reads, grid-stride loops, reads in device
functions, the texel type of a normalised object read from the host's channel descriptor."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.fidelity.check import check
from cuda2nki.pipeline import port_file

_OBJECT_HOST = (
    "void go({params}, cudaArray_t a) {{\n"
    "  cudaResourceDesc rd = {{}};\n  rd.res.array.array = a;\n"
    "  cudaTextureDesc td = {{}};\n{modes}"
    "  cudaTextureObject_t t;\n  cudaCreateTextureObject(&t, &rd, &td, 0);\n"
    "  {launch}\n}}\n"
)

CASES = {
    "object-float4-linear-clamp-border": (
        "__global__ void shade(float* dst, int w, int h, cudaTextureObject_t img) {\n"
        "  int c = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  int r = blockIdx.y * blockDim.y + threadIdx.y;\n"
        "  if (c < w && r < h) {\n"
        "    float4 p = tex2D<float4>(img, c + 0.25f, r + 0.75f);\n"
        "    dst[r * w + c] = 0.5f * p.x + p.y - p.z * p.w;\n  }\n}\n"
        + _OBJECT_HOST.format(
            params="float* dst, int w, int h",
            modes="  td.addressMode[0] = cudaAddressModeClamp;\n"
            "  td.addressMode[1] = cudaAddressModeBorder;\n"
            "  td.filterMode = cudaFilterModeLinear;\n",
            launch="shade<<<dim3((w + 15) / 16, (h + 15) / 16), dim3(16, 16)>>>(dst, w, h, t);",
        )
    ),
    "object-float2-fetch-grid-stride": (
        "__global__ void magnitude(float* out, int n, cudaTextureObject_t pairs) {\n"
        "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {\n"
        "    float2 z = tex1Dfetch<float2>(pairs, i);\n"
        "    out[i] = z.x * z.x + z.y * z.y;\n  }\n}\n"
        "void go(float* out, int n) {\n"
        "  cudaTextureObject_t pairs = 0;\n"
        "  magnitude<<<8, 128>>>(out, n, pairs);\n}\n"
    ),
    "object-uchar4-point-elements-in-device-function": (
        "__device__ int luma(cudaTextureObject_t t, float x, float y) {\n"
        "  uchar4 p = tex2D<uchar4>(t, x, y);\n"
        "  return (77 * p.x + 150 * p.y + 29 * p.z) >> 8;\n}\n"
        "__global__ void grey(int* g, int width, int height, cudaTextureObject_t rgba) {\n"
        "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  int y = blockIdx.y * blockDim.y + threadIdx.y;\n"
        "  if (x < width && y < height) g[y * width + x] = luma(rgba, x + 0.5f, y + 0.5f) + 1;\n}\n"
        + _OBJECT_HOST.format(
            params="int* g, int width, int height",
            modes="  td.addressMode[0] = cudaAddressModeClamp;\n"
            "  td.addressMode[1] = cudaAddressModeClamp;\n",
            launch="grey<<<dim3((width + 31) / 32, (height + 7) / 8), dim3(32, 8)>>>"
            "(g, width, height, t);",
        )
    ),
    "object-normalised-uchar4-from-channel-desc": (
        "__global__ void tone(float* o, int w, int h, float gain, cudaTextureObject_t src) {\n"
        "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  int y = blockIdx.y * blockDim.y + threadIdx.y;\n"
        "  if (x >= w || y >= h) return;\n"
        "  float4 v = tex2D<float4>(src, (x + 0.5f) / w, (y + 0.5f) / h);\n"
        "  o[y * w + x] = gain * (v.x + v.y + v.z) + v.w;\n}\n"
        "void go(float* o, int w, int h, unsigned char* pixels) {\n"
        "  cudaChannelFormatDesc cd = cudaCreateChannelDesc<uchar4>();\n"
        "  cudaArray_t a;\n  cudaMallocArray(&a, &cd, w, h);\n"
        "  cudaResourceDesc rd = {};\n  rd.res.array.array = a;\n"
        "  cudaTextureDesc td = {};\n"
        "  td.addressMode[0] = cudaAddressModeWrap;\n"
        "  td.addressMode[1] = cudaAddressModeClamp;\n"
        "  td.readMode = cudaReadModeNormalizedFloat;\n"
        "  td.normalizedCoords = 1;\n"
        "  cudaTextureObject_t t;\n  cudaCreateTextureObject(&t, &rd, &td, 0);\n"
        "  dim3 b(16, 8);\n"
        "  tone<<<dim3((w + b.x - 1) / b.x, (h + b.y - 1) / b.y), b>>>(o, w, h, 0.25f, t);\n}\n"
    ),
    "reference-normalised-short2-linear": (
        "texture<short2, 2, cudaReadModeNormalizedFloat> field;\n"
        "__global__ void flow(float* u, float* v, int nx, int ny) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  int j = blockIdx.y;\n"
        "  if (i < nx && j < ny) {\n"
        "    float2 d = tex2D(field, i + 0.3f, j + 0.6f);\n"
        "    u[j * nx + i] = d.x;\n    v[j * nx + i] = d.y;\n  }\n}\n"
        "void go(float* u, float* v, int nx, int ny, cudaArray* a) {\n"
        "  field.filterMode = cudaFilterModeLinear;\n"
        "  field.addressMode[0] = cudaAddressModeBorder;\n"
        "  cudaBindTextureToArray(field, a);\n"
        "  flow<<<dim3((nx + 63) / 64, ny), 64>>>(u, v, nx, ny);\n}\n"
    ),
    "reference-float4-fetch": (
        "texture<float4, 1, cudaReadModeElementType> rows;\n"
        "__global__ void dot4(float* y, const float4* x, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) {\n"
        "    float4 a = tex1Dfetch(rows, i);\n    float4 b = x[i];\n"
        "    y[i] = a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;\n  }\n}\n"
        "void go(float* y, const float4* x, float4* table, int n) {\n"
        "  cudaBindTexture(0, rows, table, n * sizeof(float4));\n"
        "  dot4<<<(n + 127) / 128, 128>>>(y, x, n);\n}\n"
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_vector_texel_reads_port_and_check(case: str, target: str, tmp_path: Path) -> None:
    cu = tmp_path / "tex.cu"
    cu.write_text(CASES[case])
    res = port_file(cu, target=target)
    assert res.source is not None, [d.render() for d in res.diagnostics]
    port = tmp_path / "tex_port.py"
    port.write_text(res.source)
    report = check(cu, port, seeds=1, extra_points=False, timeout=600)  # a loaded machine
    assert report.numerics_outcome == "pass", report.numerics
