"""Texture reads port as ordinary tensor reads: a kernel reading a texture object or a legacy
texture reference ports from its inferred binding (the texture an input tensor, its extents
size parameters), and our own ``check`` finds its numbers equal to the interpreter's, over
spellings: object API and references, 1-D fetch and 2-D filtered reads, reads in device functions, point and linear
filtering, clamp / border / wrap addressing, float and int texels."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.fidelity.check import check
from cuda2nki.pipeline import port_file

#: kernel source (with the host code that sets the texture's mode) by case
CASES = {
    "object-linear-border-2d": (
        "__global__ void warp(float* dst, int w, int h, float dx, cudaTextureObject_t img) {\n"
        "  int c = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  int r = blockIdx.y * blockDim.y + threadIdx.y;\n"
        "  if (c < w && r < h) dst[r * w + c] = tex2D<float>(img, c + dx, r + 0.5f);\n}\n"
        "void go(float* dst, int w, int h, float dx, cudaArray_t a) {\n"
        "  cudaResourceDesc rd = {};\n  rd.res.array.array = a;\n"
        "  cudaTextureDesc td = {};\n"
        "  td.addressMode[0] = cudaAddressModeBorder;\n"
        "  td.addressMode[1] = cudaAddressModeClamp;\n"
        "  td.filterMode = cudaFilterModeLinear;\n"
        "  cudaTextureObject_t t;\n  cudaCreateTextureObject(&t, &rd, &td, 0);\n"
        "  dim3 b(16, 16);\n"
        "  warp<<<dim3((w + 15) / 16, (h + 15) / 16), b>>>(dst, w, h, dx, t);\n}\n"
    ),
    "object-int-fetch-grid-stride": (
        "__global__ void remap(int* out, const int* pos, int n, cudaTextureObject_t lut) {\n"
        "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)\n"
        "    out[i] = tex1Dfetch<int>(lut, pos[i]) - i;\n}\n"
        "void go(int* out, const int* pos, int n) {\n"
        "  cudaTextureObject_t lut = 0;\n"
        "  remap<<<4, 256>>>(out, pos, n, lut);\n}\n"
    ),
    "object-through-device-functions": (
        "__device__ float texel(cudaTextureObject_t t, float x, float y) {\n"
        "  return tex2D<float>(t, x, y);\n}\n"
        "__device__ float cross5(cudaTextureObject_t t, float x, float y) {\n"
        "  return texel(t, x, y) * 4.0f - texel(t, x - 1, y) - texel(t, x + 1, y)\n"
        "         - texel(t, x, y - 1) - texel(t, x, y + 1);\n}\n"
        "__global__ void edges(float* e, int w, int h, cudaTextureObject_t img) {\n"
        "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  int y = blockIdx.y * blockDim.y + threadIdx.y;\n"
        "  if (x < w && y < h) e[y * w + x] = cross5(img, x + 0.5f, y + 0.5f);\n}\n"
        "void go(float* e, int w, int h, cudaArray_t a) {\n"
        "  cudaResourceDesc rd = {};\n  rd.res.array.array = a;\n"
        "  cudaTextureDesc td = {};\n  td.addressMode[0] = cudaAddressModeClamp;\n"
        "  td.addressMode[1] = cudaAddressModeClamp;\n"
        "  cudaTextureObject_t t;\n  cudaCreateTextureObject(&t, &rd, &td, 0);\n"
        "  edges<<<dim3((w + 31) / 32, (h + 7) / 8), dim3(32, 8)>>>(e, w, h, t);\n}\n"
    ),
    "reference-fetch": (
        "texture<float, 1, cudaReadModeElementType> weights;\n"
        "__global__ void scale(float* y, const float* x, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) y[i] = x[i] * tex1Dfetch(weights, i);\n}\n"
        "void go(float* y, const float* x, float* wts, int n) {\n"
        "  cudaBindTexture(0, weights, wts, n * sizeof(float));\n"
        "  scale<<<(n + 127) / 128, 128>>>(y, x, n);\n}\n"
    ),
    "reference-point-wrap-normalised": (
        "texture<float, 2, cudaReadModeElementType> pattern;\n"
        "__global__ void tile(float* o, int w, int h, float period) {\n"
        "  int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  int y = blockIdx.y;\n"
        "  if (x < w && y < h) o[y * w + x] = tex2D(pattern, (x + 0.5f) / period, y / period);\n}\n"
        "void go(float* o, int w, int h, cudaArray* a) {\n"
        "  pattern.normalized = true;\n"
        "  pattern.addressMode[0] = cudaAddressModeWrap;\n"
        "  pattern.addressMode[1] = cudaAddressModeWrap;\n"
        "  cudaBindTextureToArray(pattern, a);\n"
        "  tile<<<dim3((w + 63) / 64, h), 64>>>(o, w, h, 6.0f);\n}\n"
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_texture_read_ports_and_checks(case: str, tmp_path: Path) -> None:
    cu = tmp_path / "tex.cu"
    cu.write_text(CASES[case])
    res = port_file(cu)
    assert res.source is not None, [d.message for d in res.diagnostics]
    port = tmp_path / "tex_port.py"
    port.write_text(res.source)
    report = check(cu, port, seeds=1, extra_points=False)
    assert report.numerics_outcome == "pass", report.numerics
