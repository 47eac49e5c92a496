"""Operators a program defines on its structs are calls: ``u * v`` is ``operator*(u, v)``
(see cuda2nki.frontend.structops), not lane-wise arithmetic."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

RECORDS = {
    "complex-mul": (
        "struct Cplx { float re, im; };\n"
        "__device__ Cplx operator*(Cplx p, Cplx q) {\n"
        "    Cplx r; r.re = p.re * q.re - p.im * q.im; r.im = p.re * q.im + p.im * q.re;\n"
        "    return r; }\n",
        "Cplx w = u * v;",
        lambda u, v: u * v,
    ),
    "typedef-minus-scaled": (
        "typedef struct { float re; float im; } C2;\n"
        "__device__ __forceinline__ C2 operator-(const C2 a, const C2 b) {\n"
        "    return C2{a.re - b.re, a.im + b.im}; }\n"
        "__device__ C2 operator*(float s, C2 a) { return C2{s * a.re, s * a.im}; }\n",
        "C2 w; w = 2.0f * (u - v);",
        lambda u, v: 2 * ((u.real - v.real) + 1j * (u.imag + v.imag)),
    ),
    "nested-calls": (
        "struct Z { float re; float im; };\n"
        "__device__ Z operator+(Z a, Z b) { Z r = {a.re + b.re, a.im + b.im}; return r; }\n"
        "__device__ Z operator*(Z a, Z b) {\n"
        "    return Z{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }\n",
        "auto w = u * v + u;",
        lambda u, v: u * v + u,
    ),
}


@pytest.mark.parametrize("spelling", sorted(RECORDS))
def test_record_operators_call_the_program_s_function(tmp_path: Path, spelling: str) -> None:
    decls, use, ref = RECORDS[spelling]
    tname = decls.split("struct ")[1].split(" ")[0] if "typedef" not in decls else "C2"
    path = tmp_path / "k.cu"
    path.write_text(
        decls
        + f"""__global__ void k(const float* x, float* out) {{
    int t = threadIdx.x;
    {tname} u = {{x[4 * t], x[4 * t + 1]}};
    {tname} v = {{x[4 * t + 2], x[4 * t + 3]}};
    {use}
    out[2 * t] = w.re;
    out[2 * t + 1] = w.im;
}}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    x = np.arange(16, dtype=np.float32) - 5
    got = run_kernel(tu, "k", grid=(1,), block=(4,), args={"x": x, "out": np.zeros(8, np.float32)})[
        "out"
    ]
    z = x.reshape(4, 4)
    u = z[:, 0] + 1j * z[:, 1]
    v = z[:, 2] + 1j * z[:, 3]
    w = ref(u, v)
    np.testing.assert_allclose(got.reshape(4, 2), np.stack([w.real, w.imag], 1), rtol=1e-6)


def test_aggregate_operator_into_a_variable(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        """struct Acc { float sum; int count; };
__device__ Acc operator+(Acc a, Acc b) { Acc r; r.sum = a.sum + b.sum; r.count = a.count + b.count; return r; }
__global__ void k(const float* x, float* out, int* n) {
    Acc total = {0.0f, 0};
    for (int i = 0; i < 4; i++) {
        Acc one = {x[threadIdx.x * 4 + i], 1};
        total = total + one;
    }
    Acc twice = total + total;
    out[threadIdx.x] = twice.sum;
    n[threadIdx.x] = twice.count;
}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    x = np.arange(8, dtype=np.float32)
    got = run_kernel(
        tu,
        "k",
        grid=(1,),
        block=(2,),
        args={"x": x, "out": np.zeros(2, np.float32), "n": np.zeros(2, np.int32)},
    )
    np.testing.assert_allclose(got["out"], 2 * x.reshape(2, 4).sum(1))
    np.testing.assert_array_equal(got["n"], [8, 8])


@pytest.mark.parametrize(
    "ops",
    [
        "struct V3 { float x; float y; int w;\n"
        "  __device__ float operator*(const V3& o) const { return x * o.x + y * o.y; }\n"
        "  __device__ V3 operator+(V3 o) const { V3 r; r.x = x + o.x; r.y = y + o.y; r.w = w;"
        " return r; }\n};\n"
        "__device__ bool operator==(V3 a, V3 b) { return a.x == b.x && a.y == b.y; }\n",
        "struct V3 { float x; float y; int w; };\n"
        "__device__ float operator*(V3 a, V3 b) { return a.x * b.x + a.y * b.y; }\n"
        "__device__ V3 operator+(V3 a, V3 b) { V3 r = {a.x + b.x, a.y + b.y, a.w}; return r; }\n"
        "__device__ bool operator==(const V3 a, const V3 b) { return a.x == b.x && a.y == b.y; }\n",
    ],
    ids=["members", "free"],
)
def test_aggregate_operators_with_scalar_values(tmp_path: Path, ops: str) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        ops
        + """__global__ void k(const float* x, float* out) {
    int t = threadIdx.x;
    V3 a = {x[4 * t], x[4 * t + 1], 1};
    V3 b = {x[4 * t + 2], x[4 * t + 3], 2};
    out[3 * t] = a * b;
    V3 c = a + b;
    out[3 * t + 1] = c.x + c.y + c.w;
    out[3 * t + 2] = (a == a) + 2 * (a == b);
}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    x = np.array([1, 2, 3, 4, 5, 5, 5, 5], np.float32)
    got = run_kernel(tu, "k", grid=(1,), block=(2,), args={"x": x, "out": np.zeros(6, np.float32)})[
        "out"
    ]
    np.testing.assert_array_equal(got, [11, 11, 1, 50, 21, 3])


def test_an_aggregate_operand_without_an_operator_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        """struct S { float a; int b; };
__global__ void k(float* out) {
    S s = {1.0f, 2};
    out[0] = s * 2.0f;
}
"""
    )
    tu = parse_file(path)
    d = tu.rejected["k"][0]
    assert d.code == "C2N1025" and d.loc.line == 4
