"""Member functions of aggregate structs: called on a struct held by value, on one in
memory, through ``this``, and as a functor (``operator()``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

PAYOFF = """
struct PayoffCall {
    double m_K;
    __host__ __device__ PayoffCall(double K) : m_K(K) {}
    __host__ __device__ double operator()(double S) const { return max(S - m_K, 0.0); }
    __host__ __device__ int in_the_money(double S) const { return S > this->m_K; }
};
__global__ void price(PayoffCall payoff, const double* s, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = payoff(s[i]) + payoff.in_the_money(s[i]);
}
"""


def test_functor_parameter(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(PAYOFF)
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    s = np.array([1.0, 3.0, 5.0, 2.5, 2.0])
    got = run_kernel(
        tu,
        "price",
        grid=(1,),
        block=(32,),
        args={"payoff__m_K": 2.0, "s": s, "out": np.zeros(5), "n": 5},
    )["out"]
    np.testing.assert_array_equal(got, np.maximum(s - 2, 0) + (s > 2))


# a struct in memory: the member function writes the caller's object
ACC = """
struct Acc {
    float sum; int n; float w[3];
    __device__ void add(float v) { sum += v * w[n % 3]; n++; }
    __device__ float mean() const { return n ? sum / n : 0.0f; }
    __device__ void add_twice(float v) { add(v); this->add(v); }
};
__global__ void accumulate(const float* x, Acc* accs, float* out, int n) {
    int i = threadIdx.x;
    if (i < n) {
        CALLS
        out[i] = accs[i].mean();
    }
}
"""
SPELLINGS = {
    "index": "accs[i].add(x[i]); accs[i].add(1.0f); accs[i].add(2.0f);",
    "arrow": "Acc* a = accs + i; a->add(x[i]); a->add(1.0f); (*a).add(2.0f);",
    "nested_calls": "accs[i].add(x[i]); Acc* a = &accs[i]; a->add_twice(0.5f);",
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_member_function_of_a_struct_in_memory(tmp_path: Path, spelling: str) -> None:
    path = tmp_path / "k.cu"
    path.write_text(ACC.replace("CALLS", SPELLINGS[spelling]))
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    n = 4
    dt = np.dtype([("sum", "<f4"), ("n", "<i4"), ("w", "<f4", 3)])
    acc = np.zeros(n, dtype=dt)
    acc["w"] = [1, 2, 3]
    x = np.array([1.0, 3.0, 5.0, 2.5], np.float32)
    got = run_kernel(
        tu,
        "accumulate",
        grid=(1,),
        block=(4,),
        args={"x": x, "accs": acc.view(np.uint8).copy(), "out": np.zeros(n, np.float32), "n": n},
    )
    second = 0.5 if spelling == "nested_calls" else 1.0
    third = 0.5 if spelling == "nested_calls" else 2.0
    want_sum = x * 1 + second * 2 + third * 3
    out = got["accs"].view(dt)
    np.testing.assert_array_equal(out["n"], [3] * n)
    np.testing.assert_allclose(out["sum"], want_sum, rtol=1e-6)
    np.testing.assert_allclose(got["out"], want_sum / 3, rtol=1e-6)


def test_member_function_of_a_local_struct(tmp_path: Path) -> None:
    """A struct held by value: the member function writes the caller's member variables."""
    path = tmp_path / "k.cu"
    path.write_text(
        """struct Welford {
    float mean; float m2; int count;
    __device__ void push(float x) {
        count += 1;
        float d = x - mean;
        mean += d / count;
        m2 += d * (x - mean);
    }
    __device__ float variance() const { return count > 1 ? m2 / (count - 1) : 0.0f; }
};
__global__ void row_var(const float* x, float* out, int cols) {
    Welford w = {0.0f, 0.0f, 0};
    for (int j = 0; j < cols; j++) w.push(x[threadIdx.x * cols + j]);
    out[threadIdx.x] = w.variance();
}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    x = np.random.default_rng(1).standard_normal((8, 16)).astype(np.float32)
    got = run_kernel(
        tu,
        "row_var",
        grid=(1,),
        block=(8,),
        args={"x": x.reshape(-1), "out": np.zeros(8, np.float32), "cols": 16},
    )["out"]
    np.testing.assert_allclose(got, x.astype(np.float64).var(axis=1, ddof=1), rtol=1e-4)


def test_a_local_built_by_its_constructor_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        PAYOFF.split("__global__")[0]
        + "__global__ void k(double* out) {\n    PayoffCall p(2.0);\n    out[0] = p(3.0);\n}\n"
    )
    tu = parse_file(path)
    (ds,) = tu.rejected.values()
    assert ds[0].code == "C2N1025" and ds[0].loc.line == 9 and "constructor" in ds[0].message


def test_unknown_member_function_is_a_diagnostic(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(PAYOFF.replace("payoff.in_the_money(s[i])", "payoff.strike()"))
    tu = parse_file(path)
    (ds,) = tu.rejected.values()
    assert ds[0].code == "C2N1021" and "PayoffCall::strike" in ds[0].message


def test_a_struct_deriving_from_an_empty_base(tmp_path: Path) -> None:
    """A base without data members (a class of allocation operators) adds nothing to the
    layout: the derived struct is an aggregate of its own body."""
    path = tmp_path / "k.cu"
    path.write_text(
        """class Managed { public: void* operator new(size_t n) { return 0; } };
struct Element : public Managed { char* name; int value; };
__global__ void bump(Element* e) { e->name[0] = 'd'; e->value++; }
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics


def test_a_derived_struct_stays_refused(tmp_path: Path) -> None:
    """Its bases' members would come first in its layout: not an aggregate of its own body."""
    path = tmp_path / "k.cu"
    path.write_text(
        """struct Base { int tag; };
struct Point : public Base { float x, y; __device__ float sum() const { return x + y; } };
__global__ void k(const Point* p, float* out) { out[0] = p->sum(); }
"""
    )
    tu = parse_file(path)
    (ds,) = tu.rejected.values()
    assert ds[0].code == "C2N1025" and ds[0].loc.line == 3


GENERIC = (
    PAYOFF.split("__global__")[0]
    + """
template <typename Payoff>
__global__ void price_t(Payoff payoff, const double* s, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = payoff(s[i]) + payoff.in_the_money(s[i]);
}
"""
)


def test_functor_template_parameter_not_instantiated(tmp_path: Path) -> None:
    """Launched only from host template code: the calls are opaque values until instantiated."""
    path = tmp_path / "k.cu"
    path.write_text(GENERIC)
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    assert tu.kernels[0].name == "price_t"


def test_functor_template_parameter_instantiated(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        GENERIC
        + "int main() { double* s; double* o; PayoffCall p(2.0);\n"
        + "    price_t<PayoffCall><<<1, 32>>>(p, s, o, 5); return 0; }\n"
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    (k,) = tu.kernels
    s = np.array([1.0, 3.0, 5.0, 2.5, 2.0])
    got = run_kernel(
        tu,
        k.name,
        grid=(1,),
        block=(32,),
        args={"payoff__m_K": 2.0, "s": s, "out": np.zeros(5), "n": 5},
    )["out"]
    np.testing.assert_array_equal(got, np.maximum(s - 2, 0) + (s > 2))


@pytest.mark.parametrize(
    "method",
    [
        "virtual __device__ float get() const { return v; }",  # a table pointer comes first
        "static __device__ float one() { return 1.0f; }",  # no object
    ],
)
def test_virtual_and_static_member_functions_stay_refused(tmp_path: Path, method: str) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        f"struct Box {{ float v; int n; {method} }};\n"
        "__global__ void k(const Box* b, float* out) { out[0] = b->v; }\n"
    )
    tu = parse_file(path)
    (ds,) = tu.rejected.values()
    assert ds[0].code == "C2N1025" and ds[0].loc.line == 2


VEC = """
struct Vec3 {
    float v[3]; int tag;
    __host__ __device__ float& operator[](int i) { return v[i]; }
    __host__ __device__ const float& at(int i) const { return this->v[i]; }
};
__global__ void bump(Vec3* vs, float* out, int n) {
    int i = threadIdx.x;
    if (i < n) {
        BODY
    }
}
"""
BODIES = {
    "memory": "vs[i][1] = vs[i].at(1) + 1.0f; out[i] = vs[i][0] + vs[i].at(1) * 2.0f;",
    "pointer": "Vec3* p = vs + i; (*p)[1] += 1.0f; out[i] = p->at(0) + (*p)[1] * 2.0f;",
    "local": "Vec3 a; a[0] = vs[i][0]; a[1] = vs[i].at(1) + 1.0f; vs[i][1] = a[1];"
    " out[i] = a.at(0) + a[1] * 2.0f;",
}


@pytest.mark.parametrize("body", sorted(BODIES))
def test_operator_subscript_returning_a_reference(tmp_path: Path, body: str) -> None:
    path = tmp_path / "k.cu"
    path.write_text(VEC.replace("BODY", BODIES[body]))
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    dt = np.dtype([("v", "<f4", 3), ("tag", "<i4")])
    vs = np.zeros(4, dt)
    vs["v"] = np.arange(12, dtype=np.float32).reshape(4, 3)
    got = run_kernel(
        tu,
        "bump",
        grid=(1,),
        block=(4,),
        args={"vs": vs.view(np.uint8).copy(), "out": np.zeros(4, np.float32), "n": 4},
    )
    v = vs["v"].copy()
    v[:, 1] += 1
    np.testing.assert_array_equal(got["vs"].view(dt)["v"], v)
    np.testing.assert_array_equal(got["out"], v[:, 0] + v[:, 1] * 2)


#: device functions returning a reference: an lvalue alias of the element they name
FREE_REFS = {
    "assign_through": (
        "__device__ float& at(float* m, int r, int c, int ld) { return m[r * ld + c]; }\n"
        "__global__ void k(float* m, const float* b, int ld) {\n"
        "    int r = blockIdx.x, c = threadIdx.x;\n"
        "    at(m, r, c, ld) = 2.0f * b[r * ld + c];\n}\n"
    ),
    "compound_and_const_read": (
        "__device__ inline float &elem(float *p, int i) { return p[i]; }\n"
        "__device__ const float& celem(const float* p, int i) { return p[i]; }\n"
        "__global__ void k(float* m, const float* b, int ld) {\n"
        "    int i = blockIdx.x * ld + threadIdx.x;\n"
        "    elem(m, i) = 0.0f;\n"
        "    elem(m, i) += celem(b, i) * 2.0f;\n}\n"
    ),
    "reference_parameter": (
        "__device__ float& pick(float& a, float& b, bool first) {\n"
        "    if (first) return a;\n"
        "    return b;\n}\n"
        "__global__ void k(float* m, const float* b, int ld) {\n"
        "    int i = blockIdx.x * ld + threadIdx.x;\n"
        "    float lo = b[i], hi = 0.0f;\n"
        "    pick(hi, lo, false) *= 2.0f;\n"
        "    m[i] = lo;\n}\n"
    ),
}


@pytest.mark.parametrize("name", sorted(FREE_REFS))
def test_free_function_returning_a_reference_is_an_lvalue(tmp_path: Path, name: str) -> None:
    path = tmp_path / "k.cu"
    path.write_text(FREE_REFS[name])
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    b = np.arange(12, dtype=np.float32)
    got = run_kernel(
        tu, "k", grid=(3,), block=(4,), args={"m": np.ones(12, np.float32), "b": b, "ld": 4}
    )
    np.testing.assert_array_equal(got["m"], 2.0 * b)


def test_a_reference_to_a_temporary_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        """__device__ float& twice(float* p) { return p[0] * 2.0f; }
__global__ void k(float* p) { twice(p) = 1.0f; }
"""
    )
    tu = parse_file(path)
    assert "k" in tu.rejected
    assert any(d.code == "C2N1030" and d.loc.line == 1 for d in tu.diagnostics)
