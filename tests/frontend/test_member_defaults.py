"""Default member initialisers of a struct used by value in device code: ``S s;`` takes them,
``S s = {a};`` takes them for the members it leaves out, a struct read from memory takes the
stored members."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.simt import run_kernel

_LOCALS = """\
struct Acc {
    float sum = 0.5f;
    int count{3};
    float scale = 2.0f, bias = -1.0f;
};
__global__ void acc(const float* in, float* out, int n) {
    int i = threadIdx.x + blockDim.x * blockIdx.x;
    Acc a;
    Acc b = {1.0f};
    Acc c = {4.0f, 5};
    if (i < n) {
        a.sum += in[i];
        out[i] = a.sum * a.scale + a.count + a.bias + b.sum + b.count + b.scale + c.count + c.bias;
    }
}
"""


def test_defaults_of_a_local_and_of_a_brace_initialiser(parse):
    tu = parse(_LOCALS)
    assert tu.rejected == {}, tu.diagnostics
    x = np.arange(64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    got = run_kernel(tu, "acc", grid=(1,), block=(64,), args={"in": x, "out": out, "n": 64})
    want = (x + 0.5) * 2 + 3 - 1 + 1 + 3 + 2 + 5 - 1
    np.testing.assert_allclose(got["out"], want)


_NESTED = """\
typedef struct {
    int lo = -7, hi = 7;
} Range;
struct Box {
    Range r;
    float w[3] = {1.0f, 2.0f, 3.0f};
};
__global__ void clampw(const int* v, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Box b;
    if (i < n) {
        int x = v[i] < b.r.lo ? b.r.lo : (v[i] > b.r.hi ? b.r.hi : v[i]);
        out[i] = x * b.w[i % 3];
    }
}
"""


def test_defaults_of_a_nested_struct_and_an_array_member(parse):
    tu = parse(_NESTED)
    assert tu.rejected == {}, tu.diagnostics
    v = np.arange(-20, 20, dtype=np.int32)
    out = np.zeros(40, np.float32)
    got = run_kernel(tu, "clampw", grid=(1,), block=(40,), args={"v": v, "out": out, "n": 40})
    w = np.array([1, 2, 3], np.float32)[np.arange(40) % 3]
    np.testing.assert_allclose(got["out"], np.clip(v, -7, 7) * w)


@pytest.mark.parametrize("spelling", ["typedef struct atom_t {BODY} atom;", "struct atom {BODY};"])
def test_struct_read_from_memory_takes_the_stored_members(parse, spelling):
    body = "double pos[3] = {0, 0, 0}; double q = 0; int mol = 0; int frozen = 0;"
    tu = parse(
        spelling.replace("BODY", body)
        + """
__global__ void charge(atom* __restrict__ atoms, double* out, int n) {
    int i = threadIdx.x + blockDim.x * blockIdx.x;
    if (i < n) {
        const atom a = atoms[i];
        out[i] = a.pos[1] * a.q + a.mol - atoms[i].frozen;
    }
}
"""
    )
    assert tu.rejected == {}, tu.diagnostics
    rec = np.dtype(
        [("pos", np.float64, 3), ("q", np.float64), ("mol", np.int32), ("frozen", np.int32)]
    )
    atoms = np.zeros(8, rec)
    atoms["pos"][:, 1] = np.arange(8)
    atoms["q"] = 0.5
    atoms["mol"] = 3
    atoms["frozen"] = 1
    out = np.zeros(8, np.float64)
    raw = atoms.view(np.uint8)
    got = run_kernel(tu, "charge", grid=(1,), block=(8,), args={"atoms": raw, "out": out, "n": 8})
    np.testing.assert_allclose(got["out"], np.arange(8) * 0.5 + 3 - 1)


@pytest.mark.parametrize(
    "ctor",
    [
        "__device__ Span() {}",
        "__host__ __device__ Span(void) { /* nothing to do */ }",
        "__device__ __forceinline__ Span() { }\n    __device__ Span(const int* p, int n) { start = p; len = n; }",
    ],
)
def test_a_local_of_a_struct_with_an_empty_default_constructor(parse, ctor):
    tu = parse(f"""\
struct Span {{
    const int* start;
    int len;
    float w = 0.5f;
    {ctor}
}};
__global__ void tail_sum(const int* v, float* out, int n) {{
    int i = threadIdx.x;
    Span s;
    if (i < n) {{
        s.start = v + i;
        s.len = n - i;
        out[i] = (s.start[0] + s.len) * s.w;
    }}
}}
""")
    assert tu.rejected == {}, tu.diagnostics
    v = np.arange(32, dtype=np.int32)
    out = np.zeros(32, np.float32)
    got = run_kernel(tu, "tail_sum", grid=(1,), block=(32,), args={"v": v, "out": out, "n": 32})
    np.testing.assert_allclose(got["out"], (v + (32 - v)) * 0.5)


@pytest.mark.parametrize(
    "ctor",
    ["__device__ Acc() { n = 1; }", "__device__ Acc() : n(1) {}", "__device__ Acc(int k = 1) {}"],
)
def test_a_default_constructor_that_does_something_is_still_refused(parse, ctor):
    tu = parse(f"""\
struct Acc {{
    int n;
    {ctor}
}};
__global__ void k(int* out) {{
    Acc a;
    out[threadIdx.x] = a.n;
}}
""")
    assert "k" in tu.rejected
    assert tu.rejected["k"][0].code == "C2N1025"
