"""Pointers to vectors reinterpreted as pointers to other vectors port literally: lanes of the
same type at another width (``(const float2*)`` over ``float4*``, ``float4*`` over a ``float2``
shared array) address the same elements, and lanes of another 32-bit type (``int4*`` over a
float buffer, ``uint2*`` over ``float2``) read the same words through a dtype view.  Lanes that
do not line up with the buffer's elements (bytes, halves) stay refused."""

from __future__ import annotations

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.pipeline import port_file
from tests.port.acceptance import grid_binding, tensor_param
from tests.port.literal_acceptance import run_literal_exactly

_IO = {"x": tensor_param(["4*n"], "in", "float32", [-3.0, 3.0]),
       "y": tensor_param(["4*n"], "out"), "n": 150}  # fmt: skip
_SHAPES = [{"n": 77}, {"n": 130}]

KERNELS = {
    # other widths of the same lanes, and int4/uint2 words of float data
    "widths_and_words": (
        "__global__ void k(const float* x, float* y, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  __shared__ float2 s[128];\n"
        "  const float4* x4 = reinterpret_cast<const float4*>(x);\n"
        "  const float2* h = reinterpret_cast<const float2*>(x4);\n"
        "  uint2* u = (uint2*)s;\n"
        "  if (i < n) {\n"
        "    int4 w = reinterpret_cast<const int4*>(x)[i];\n"
        "    s[2 * threadIdx.x] = h[2 * i + 1];\n"
        "    s[2 * threadIdx.x + 1] = make_float2(__int_as_float(w.x ^ 0x80000000), 1.0f);\n"
        "  }\n"
        "  __syncthreads();\n"
        "  if (i < n) {\n"
        "    uint2 a = u[2 * threadIdx.x];\n"
        "    float4* y4 = (float4*)y;\n"
        "    y4[i] = make_float4(__uint_as_float(a.x), __uint_as_float(a.y),\n"
        "                        s[2 * threadIdx.x + 1].x, (float)(x4[i].w > 0.0f));\n"
        "  }\n}\n"
    ),
    # a float4 view of a float2 shared array, written as pairs and read whole, grid-stride
    "pairs_read_as_quads": (
        "__global__ void k(const float* x, float* y, int n) {\n"
        "  __shared__ float2 pairs[2 * 64];\n"
        "  float4* quads = reinterpret_cast<float4*>(pairs);\n"
        "  const float2* in2 = (const float2*)x;\n"
        "  for (int g = blockIdx.x * blockDim.x + threadIdx.x; g - (int)threadIdx.x < n;"
        " g += blockDim.x * gridDim.x) {\n"
        "    int t = threadIdx.x;\n"
        "    pairs[2 * t] = g < n ? in2[2 * g] : make_float2(0.f, 0.f);\n"
        "    pairs[2 * t + 1] = g < n ? in2[2 * g + 1] : make_float2(0.f, 0.f);\n"
        "    __syncthreads();\n"
        "    float4 q = quads[t ^ 1];\n"
        "    if (g < n) reinterpret_cast<float4*>(y)[g] = make_float4(q.w, q.z, q.y, q.x);\n"
        "    __syncthreads();\n"
        "  }\n}\n"
    ),
    # int2 words of a float2 input, sign bits cleared, written back through a uint4 view
    "int_lanes_of_float_data": (
        "__global__ void k(const float* x, float* y, int n) {\n"
        "  unsigned j = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (j >= n) return;\n"
        "  const int2* w = (const int2*)(const float2*)x;\n"
        "  int2 lo = w[2 * j], hi = w[2 * j + 1];\n"
        "  uint4* out = reinterpret_cast<uint4*>(y);\n"
        "  out[j] = make_uint4(lo.x & 0x7fffffff, lo.y, hi.x, hi.y & 0x7fffffff);\n}\n"
    ),
}


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_vector_views_port_exactly(name, target, tmp_path) -> None:
    cu = tmp_path / "k.cu"
    cu.write_text(KERNELS[name])
    bind = grid_binding(["ceil_div(n, 64)"], _IO, _SHAPES, block=64)
    run, points = run_literal_exactly(cu, bind, target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches


def test_half_lanes_over_float_data_are_refused(tmp_path) -> None:
    cu = tmp_path / "k.cu"
    cu.write_text(
        "#include <cuda_fp16.h>\n"
        "__global__ void k(const float* x, float* y, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  const half2* p = reinterpret_cast<const half2*>(x);\n"
        "  if (i < n) y[i] = __low2float(p[i]);\n}\n"
    )
    bind = grid_binding(["ceil_div(n, 64)"], _IO, _SHAPES, block=64)
    res = port_file(cu, binding=binding_from_dict({"kernel": "k", **bind}, path=str(cu)),
                    lowering="literal")  # fmt: skip
    assert res.source is None
    assert any("another element" in d.message for d in res.diagnostics), [
        d.message for d in res.diagnostics
    ]
