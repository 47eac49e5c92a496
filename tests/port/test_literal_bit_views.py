"""Bit reinterpretations port literally and exactly: the intrinsics
``__float_as_int``/``__float_as_uint``/``__int_as_float``/``__uint_as_float``, their 16-bit kin
(``__half_as_ushort``, ``__ushort_as_bfloat16``...), a scalar
``reinterpret_cast<unsigned&>(f)`` and a local read through a pointer of another 32-bit type
(``*(int*)&f``), on per-thread values (a dtype view of the tile) and on uniform ones (computed
when traced).  Every port matches the SIMT interpreter bit for bit on both targets."""

from __future__ import annotations

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.pipeline import port_file
from tests.port.acceptance import grid_binding, tensor_param
from tests.port.literal_acceptance import run_literal_exactly

_FLOAT_IO = {"x": tensor_param(["n"], "in", "float32", [-3.0, 3.0]),
             "y": tensor_param(["n"], "out"), "n": 300, "s": 0.75}  # fmt: skip
_INT_IN = {"x": tensor_param(["n"], "in", "int32", [0, 1 << 20]),
           "y": tensor_param(["n"], "out"), "n": 300, "s": 0.75}  # fmt: skip
_SHAPES = [{"n": 77}, {"n": 130}]

KERNELS = {
    # rounding to bf16 at a per-thread threshold of the low half of the bits (if/else form)
    "threshold_rounding_bits": (
        _FLOAT_IO,
        "__global__ void k(const float* x, float* y, int n, float s) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i >= n) return;\n"
        "  unsigned int bits = __float_as_uint(x[i]);\n"
        "  unsigned int cut = (i * 2654435761u) & 0xFFFFu;\n"
        "  if ((bits & 0xFFFFu) > cut) bits |= 0xFFFFu; else bits &= ~0xFFFFu;\n"
        "  y[i] = __uint_as_float(bits);\n}\n",
    ),
    # absolute value and sign flip through signed bits, in a grid-stride loop
    "sign_bits_grid_stride": (
        _FLOAT_IO,
        "__global__ void k(const float* x, float* y, int n, float s) {\n"
        "  for (int j = threadIdx.x + blockIdx.x * blockDim.x; j < n; j += blockDim.x * gridDim.x) {\n"
        "    int w = __float_as_int(x[j]);\n"
        "    float mag = __int_as_float(w & 0x7fffffff);\n"
        "    float neg = __int_as_float(w ^ (int)0x80000000);\n"
        "    y[j] = mag * s + neg;\n  }\n}\n",
    ),
    # uniform operands: a constant's and a scalar parameter's bits, when traced
    "uniform_operands": (
        _FLOAT_IO,
        "__global__ void k(const float* x, float* y, int n, float s) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  float one = __int_as_float(0x3f800000);\n"
        "  unsigned sb = __float_as_uint(s);\n"
        "  int e = (int)((sb >> 23) & 0xffu) - 127;\n"
        "  float half_s = __uint_as_float(sb - (1u << 23));\n"
        "  if (i < n) y[i] = x[i] * half_s + one + (float)e;\n}\n",
    ),
    # integer data read as float bits: an exponent field set on a mantissa
    "integer_input_as_float": (
        _INT_IN,
        "__global__ void k(const int* x, float* y, int n, float s) {\n"
        "  int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (t < n) {\n"
        "    unsigned m = (unsigned)x[t] & 0x7fffffu;\n"
        "    y[t] = __uint_as_float(m | 0x3f800000u) - 1.0f + __int_as_float(x[t] | (127 << 23));\n"
        "  }\n}\n",
    ),
    # reinterpret_cast to a reference and the pointer spellings of a local's bits
    "cast_spellings": (
        _FLOAT_IO,
        "__global__ void k(const float* x, float* y, int n, float s) {\n"
        "  unsigned idx = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (idx < n) {\n"
        "    float v = x[idx];\n"
        "    unsigned u = reinterpret_cast<unsigned&>(v);\n"
        "    int w = *(int*)&v;\n"
        "    unsigned r = *reinterpret_cast<const unsigned*>(&v);\n"
        "    u += 1u;\n"
        "    float up = reinterpret_cast<float&>(u);\n"
        "    y[idx] = up + (float)(w & 7) + (float)(r >> 29);\n"
        "  }\n}\n",
    ),
    # 16-bit patterns of half and bfloat16 values, per thread and uniform, both directions
    "sixteen_bit_views": (
        _FLOAT_IO,
        "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
        "__global__ void k(const float* x, float* y, int n, float s) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) {\n"
        "    unsigned short ub = __bfloat16_as_ushort(__float2bfloat16(x[i]));\n"
        "    half h = __float2half(x[i] * 0.3f);\n"
        "    short sh = __half_as_short(h);\n"
        "    unsigned short uh = __half_as_ushort(h);\n"
        "    __nv_bfloat16 back = __ushort_as_bfloat16((unsigned short)(ub ^ 0x8000u));\n"
        "    half hb = __ushort_as_half((unsigned short)(uh + 1));\n"
        "    half hs = __short_as_half((short)(sh & 0x7fff));\n"
        "    half one = __ushort_as_half((unsigned short)0x3c00U);\n"
        "    __nv_bfloat16 bone = __ushort_as_bfloat16((unsigned short)0x3f80U);\n"
        "    y[i] = __bfloat162float(back) + __half2float(hb) * 2.0f + __half2float(hs)\n"
        "         + (float)(sh >> 12) + __half2float(one)\n"
        "         + __bfloat162float(bone) * (float)(__half_as_ushort(__float2half(s)) & 7);\n"
        "  }\n}\n",
    ),
}


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_bit_views_port_exactly(name, target, tmp_path) -> None:
    params, src = KERNELS[name]
    cu = tmp_path / "k.cu"
    cu.write_text(src)
    bind = grid_binding(["ceil_div(n, 64)"], params, _SHAPES, block=64)
    run, points = run_literal_exactly(cu, bind, target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches


def test_a_per_thread_bit_view_is_a_dtype_view_not_a_conversion(tmp_path) -> None:
    cu = tmp_path / "k.cu"
    cu.write_text(KERNELS["sign_bits_grid_stride"][1])
    bind = grid_binding(["ceil_div(n, 64)"], _FLOAT_IO, _SHAPES, block=64)
    res = port_file(cu, binding=binding_from_dict({"kernel": "k", **bind}, path=str(cu)),
                    lowering="literal")  # fmt: skip
    assert res.source is not None, [d.message for d in res.diagnostics]
    assert ".view(nl.int32)" in res.source and ".view(nl.float32)" in res.source


def test_a_bit_view_between_sizes_is_still_refused(tmp_path) -> None:
    """A 64-bit value's bits are no 32-bit word: that reinterpretation stays refused."""
    cu = tmp_path / "k.cu"
    cu.write_text(
        "__global__ void k(const float* x, float* y, int n, float s) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  double d = (double)x[i];\n"
        "  if (i < n) y[i] = (float)reinterpret_cast<long long&>(d);\n}\n"
    )
    bind = grid_binding(["ceil_div(n, 64)"], _FLOAT_IO, _SHAPES, block=64)
    res = port_file(cu, binding=binding_from_dict({"kernel": "k", **bind}, path=str(cu)),
                    lowering="literal")  # fmt: skip
    assert res.source is None
