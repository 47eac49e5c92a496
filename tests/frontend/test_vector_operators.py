"""Operators on vectors resolve to the file's operator functions (by operand types), else to
the headers' lane-by-lane meaning (:mod:`cuda2nki.frontend.vecoperators`)."""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source


def _calls(src: str) -> list[str]:
    tu = parse_source(src, "t.cu")
    fn = next(f for f in tu.functions if f.kind == "global")
    out: list[str] = []

    def visit(x: object) -> None:
        if isinstance(x, tuple):
            for y in x:
                visit(y)
            return
        if not isinstance(x, A.Node):
            return
        if isinstance(x, A.Call):
            out.append(x.func)
        if isinstance(x, A.Binary | A.Unary) and isinstance(x.ty, A.VectorType):
            out.append(f"unresolved {x.op}")
        for name in x.__dataclass_fields__:
            visit(getattr(x, name))

    visit(fn.body)
    return out


_OPS = """
__device__ float2 operator+(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__device__ float4 operator+(float4 a, float4 b) { return a; }
__device__ float2 operator*(float2 a, float s) { return make_float2(a.x * s, a.y * s); }
__device__ void operator-=(float2 &a, float2 b) { a.x -= b.x; a.y -= b.y; }
__device__ bool operator==(int2 a, int2 b) { return a.x == b.x && a.y == b.y; }
"""


def test_overloads_are_chosen_by_operand_types():
    got = _calls(
        _OPS
        + """
__global__ void k(float2* p, float4* q) {
  float2 a = p[0] + p[1];
  float4 b = q[0] + q[1];
  float2 c = a * 3;
  p[2] = c; q[2] = b;
}"""
    )
    assert got == ["operator+(float2, float2)", "operator+(float4, float4)", "operator*"]


def test_compound_operators_call_the_compound_or_the_plain_operator():
    got = _calls(
        _OPS
        + """
__global__ void k(float2* p) {
  float2 a = p[0];
  a -= p[1];
  a += p[2];
  p[3] = a;
}"""
    )
    assert got == ["operator-=", "operator+(float2, float2)"]


def test_comparisons_call_the_file_operator():
    got = _calls(
        _OPS
        + """
__global__ void k(int2* p, int* f) { f[0] = p[0] == p[1]; }"""
    )
    assert got == ["operator=="]


def test_without_an_operator_the_lanes_are_combined():
    got = _calls("""
__global__ void k(float4* p, half2* h) {
  float4 a = p[0] * 2.0f - p[1];
  a *= 0.5f;
  h[0] = h[1] + h[2];
  p[2] = -a;
}""")
    assert not any(g.startswith("unresolved") for g in got)
    assert got.count("make_float4") == 3 and got.count("make_half2") == 1


def test_operands_with_side_effects_and_records_are_left_as_they_are():
    got = _calls("""
struct R { float a, b; };
__device__ float4 next(float4* p) { return *p; }
__global__ void k(float4* p, R* r) {
  float4 a = next(p) + p[1];
  R c = r[0];
  p[0] = a;
}""")
    assert "unresolved +" in got


def test_a_vector_atomic_add_statement_is_one_add_per_lane():
    got = _calls("""
__global__ void k(float4* p, const float4* q, int* c) {
  atomicAdd(&p[threadIdx.x % 4], q[threadIdx.x]);
  atomicAdd(p + 4, make_float4(1.0f, 2.0f, 3.0f, 4.0f));
  atomicAdd(&p[atomicAdd(c, 1)], q[0]);
}""")
    assert got.count("atomicAdd") == 4 + 4 + 2  # the last (a side effect in it) stays whole


def test_paired_half_intrinsics_are_spelled_as_lanes():
    got = _calls("""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void k(__half2* h, __nv_bfloat162* b, const float* f, __half* o) {
  __half2 a = __hadd2(h[0], __halves2half2(o[0], __float2half(f[0])));
  h[1] = __hmul2(a, __float2half2_rn(0.5f));
  b[0] = __floats2bfloat162_rn(f[1], f[2]);
  o[1] = __low2half(__lows2half2(a, h[2])) + __high2half(a);
  float2 w = __half22float2(h[3]);
  o[2] = __float2half(w.y);
}""")
    assert not any(g.startswith(("__halves2", "__low", "__high", "__floats2")) for g in got)
    # the pair arithmetic keeps its intrinsic: one fp32 operation rounded once per lane, which
    # the interpreter and the literal lowering both model exactly
    assert {"__hadd2", "__hmul2"} <= set(got)
    assert not any(g.startswith("__half22float2") for g in got)
    assert {"make_half2", "make_bfloat162", "make_float2"} <= set(got)
