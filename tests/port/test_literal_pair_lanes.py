"""Two-lane half and bfloat16 vectors of intrinsics port literally and exactly: built from
halves or rounded floats (``__halves2bfloat162``, ``__floats2half2_rn``, ``__half2half2``),
from lanes of others (``__lows2bfloat162``, ``__highs2half2``), converted lane by lane
(``__half22float2``), combined by ``__hadd2``/``__hsub2``/``__hmul2``, negated
(``__hneg2``) or made positive (``__habs2``), taken apart
(``__low2bfloat16``, ``__high2float``) and stored through a vector pointer.  A uniform value
converted to a 16-bit float is rounded when traced, as CUDA rounds it.  Every port matches the
SIMT interpreter bit for bit on both targets."""

from __future__ import annotations

import pytest

from tests.port.acceptance import grid_binding, tensor_param
from tests.port.literal_acceptance import run_literal_exactly

_SHAPES = [{"n": 77}, {"n": 130}]


def _io(dt: str) -> dict:
    return {"x": tensor_param(["4*n"], "in", dt, [-4.0, 4.0]),
            "y": tensor_param(["4*n"], "out", dt), "n": 150, "s": 0.7}  # fmt: skip


KERNELS = {
    # bf16 pairs from halves and rounded floats, added, multiplied, split and stored whole
    "bf16_pairs": (
        "bfloat16",
        "#include <cuda_bf16.h>\n"
        "__global__ void k(const __nv_bfloat16* x, __nv_bfloat16* y, int n, float s) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) {\n"
        "    __nv_bfloat162 p = __halves2bfloat162(x[2 * i], x[2 * i + 1]);\n"
        "    __nv_bfloat162 q = __floats2bfloat162_rn((float)x[2 * i] * 3.1f, s);\n"
        "    __nv_bfloat162 r = __hadd2(p, q);\n"
        "    __nv_bfloat162 lo = __lows2bfloat162(r, p);\n"
        "    __nv_bfloat162 t = __habs2(__hadd2(__hmul2(p, q), __hneg2(r)));\n"
        "    y[4 * i] = __low2bfloat16(lo);\n"
        "    y[4 * i + 1] = __float2bfloat16(__high2float(lo) + __low2float(r));\n"
        "    reinterpret_cast<__nv_bfloat162*>(y)[2 * i + 1] = t;\n"
        "  }\n}\n",
    ),
    # half pairs: a repeated half, highs of two pairs, a difference, widened to float2
    "half_pairs_grid_stride": (
        "float16",
        "#include <cuda_fp16.h>\n"
        "__global__ void k(const half* x, half* y, int n, float s) {\n"
        "  for (int j = threadIdx.x + blockIdx.x * blockDim.x; j < n; j += blockDim.x * gridDim.x) {\n"
        "    half2 a = __halves2half2(x[4 * j], x[4 * j + 3]);\n"
        "    half2 b = __floats2half2_rn(__half2float(x[4 * j + 1]) / 3.0f, s * 2.0f);\n"
        "    half2 d = __hneg2(__hsub2(a, __half2half2(x[4 * j + 2])));\n"
        "    float2 w = __half22float2(__highs2half2(d, b));\n"
        "    y[4 * j] = __low2half(d);\n"
        "    y[4 * j + 1] = __high2half(b);\n"
        "    y[4 * j + 2] = __float2half(w.x * w.y);\n"
        "    y[4 * j + 3] = __float2half(__low2float(a) - w.y);\n"
        "  }\n}\n",
    ),
    # a uniform value rounded to bf16 and to half before fp32 arithmetic
    "uniform_short_floats": (
        "float32",
        "#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n"
        "__global__ void k(const float* x, float* y, int n, float s) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  float b = __bfloat162float(__float2bfloat16(s));\n"
        "  float h = __half2float(__float2half(s * 3.0f));\n"
        "  if (i < 4 * n) y[i] = x[i] * b + h;\n}\n",
    ),
}


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_pair_lanes_port_exactly(name, target, tmp_path) -> None:
    dt, src = KERNELS[name]
    cu = tmp_path / "k.cu"
    cu.write_text(src)
    bind = grid_binding(["ceil_div(n, 64)"], _io(dt), _SHAPES, block=64)
    run, points = run_literal_exactly(cu, bind, target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
