"""C++ constructs around kernels: device functions as template arguments, template parameters
deduced from a launch's arguments, namespace-qualified calls and enums used as constants.  Each
spelling parses without a diagnostic and runs in the SIMT interpreter as NumPy says."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source
from cuda2nki.frontend.visit import find
from cuda2nki.simt.runner import run_kernel

_N = 77

#: name -> (source with a kernel `k(float* y, const float* x, int n)` or a launch that
#: instantiates it, the expected y as a function of x)
SPELLINGS: dict[str, tuple[str, object]] = {
    # ---------------------------------------------------------------- function template arguments
    "fn_using_typedef": (
        """
using unary_t = float (*)(float);
__device__ float twice(float v) { return 2.0f * v; }
__device__ float cube(float v) { return v * v * v; }
template <unary_t op> __device__ float apply2(float v) { return op(op(v)); }
__global__ void k(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = apply2<twice>(x[i]) + apply2<cube>(x[i]);
}""",
        lambda x: 4 * x + x**9,
    ),
    "fn_typedef_address": (
        """
typedef float (*unary_t)(float);
__device__ float neg(float v) { return -v; }
template <unary_t f> __device__ float twice_of(float v) { return f(v) + f(v); }
__global__ void k(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = twice_of<&neg>(x[i]);
}""",
        lambda x: -2 * x,
    ),
    "fn_pointer_param_forwarded": (
        """
namespace ops { __device__ float half(float v) { return 0.5f * v; } }
template <float (*op)(float)> __device__ float inner(float v) { return op(v) + 1.0f; }
template <float (*op)(float)> __device__ float outer(float v) { return inner<op>(v) * 3.0f; }
__global__ void k(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = outer<ops::half>(x[i]);
}""",
        lambda x: (0.5 * x + 1) * 3,
    ),
    "fn_kernel_template_at_launch": (
        """
__device__ float sq(float v) { return v * v; }
template <float (*op)(float)> __global__ void k(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = op(x[i]);
}
void launch(float* y, const float* x, int n) { k<sq><<<(n + 31) / 32, 32>>>(y, x, n); }""",
        lambda x: x * x,
    ),
    "fn_overloaded_template_forwarding": (  # llm.c: a short overload calls the full one
        """
using red_t = float (*)(float);
__device__ float plus1(float v) { return v + 1.0f; }
template <red_t f> __device__ float apply(float v, bool twice, float extra) {
    float r = f(v);
    return (twice ? f(r) : r) + extra;
}
template <red_t f> __device__ float apply(float v) { return apply<f>(v, true, 0.5f); }
__global__ void k(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = apply<plus1>(x[i]) + apply<plus1>(x[i], false, 0.0f);
}""",
        lambda x: (x + 2.5) + (x + 1),
    ),
    # ---------------------------------------------------------------- deduced template parameters
    "deduce_host_params": (
        """
template <typename T> __global__ void k(T* y, const T* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * (T)3;
}
void launch(float* y, const float* x, int n) { k<<<(n + 31) / 32, 32>>>(y, x, n); }""",
        lambda x: 3 * x,
    ),
    "deduce_from_cast": (
        """
template <typename Elem> __global__ void k(Elem* y, const Elem* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] - (Elem)1;
}
void launch(void* out, void* in, int n) { k<<<(n + 31) / 32, 32>>>((float*)out, (const float*)in, n); }""",
        lambda x: x - 1,
    ),
    "deduce_after_written_int": (
        """
template <int S, typename T> __global__ void k(T* y, const T* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * S;
}
void launch(int n) {
    float* dy = nullptr;
    const float* dx = nullptr;
    k<5><<<(n + 31) / 32, 32>>>(dy, dx, n);
}""",
        lambda x: 5 * x,
    ),
    # ---------------------------------------------------------------- namespaces
    "ns_nested_qualified": (
        """
namespace a { namespace b { __device__ float f(float v) { return v + 2.0f; } } }
__global__ void k(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a::b::f(x[i]) * ::a::b::f(1.0f);
}""",
        lambda x: (x + 2) * 3,
    ),
    "ns_using_namespace": (
        """
namespace p::q { __device__ float g(float v) { return 4.0f * v; } }
using namespace p::q;
__global__ void k(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = g(x[i]) + q::g(1.0f);
}""",
        lambda x: 4 * x + 4,
    ),
    "ns_same_name_in_two": (
        """
__device__ float f(float v) { return v; }
namespace up { __device__ float f(float v) { return v + 10.0f; } }
namespace down { __device__ float f(float v) { return v - 10.0f; }
    __device__ float twice(float v) { return f(v) * 2.0f; } }
__global__ void k(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = up::f(x[i]) * 100.0f + down::f(x[i]) + f(x[i]) + down::twice(x[i]);
}""",
        lambda x: (x + 10) * 100 + (x - 10) + x + (x - 10) * 2,
    ),
    # ---------------------------------------------------------------- enums
    "enum_anonymous": (
        """
enum { K = 3, L = K * 2, M };
__global__ void k(float* y, const float* x, int n) {
    __shared__ float t[L * 32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    t[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = t[threadIdx.x] * K + M;
}""",
        lambda x: 3 * x + 7,
    ),
    "enum_class_scoped": (
        """
enum class Mode : int { Add = 2, Mul };
__device__ float act(float v, Mode m) { return m == Mode::Mul ? v * 3.0f : v + 2.0f; }
__global__ void k(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = act(x[i], Mode::Mul) + act(x[i], Mode::Add) + (int)Mode::Mul;
}""",
        lambda x: 3 * x + x + 2 + 3,
    ),
    "enum_in_namespace": (
        """
namespace cfg { enum Tile { X = 5, Y }; constexpr int Z = 7; }
__global__ void k(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * cfg::X + cfg::Tile::Y + cfg::Z;
}""",
        lambda x: 5 * x + 6 + 7,
    ),
    "enum_in_typedef_as_parameter": (
        """
typedef enum {
  SCALE_FIRST = 0, // a comment between enumerators
  SCALE_AFTER = 1
} order_t;
__device__ float step(float v, order_t o) { return o == SCALE_FIRST ? 2.0f * v + 1.0f : v; }
__global__ void k(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = step(x[i], SCALE_FIRST) + step(x[i], SCALE_AFTER) + SCALE_AFTER;
}""",
        lambda x: 2 * x + 1 + x + 1,
    ),
    "enum_in_typedef_tagged_with_pointer": (
        """
typedef enum tag_kind { KIND_A = 4, KIND_B, KIND_C = KIND_B * 2 } kind_t, *kind_ptr;
__global__ void k(float* y, const float* x, int n) {
    kind_t c = KIND_C;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * KIND_A + c + (int)tag_kind::KIND_B;
}""",
        lambda x: 4 * x + 10 + 5,
    ),
}


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_construct_runs_as_numpy_says(name: str) -> None:
    src, want = SPELLINGS[name]
    tu = parse_source(src, f"{name}.cu")
    assert tu.rejected == {}, tu.rejected
    assert not [d for d in tu.diagnostics if d.severity.name == "ERROR"], tu.diagnostics
    (kernel,) = [f for f in tu.kernels if f.name == "k"]
    assert not any(isinstance(p.ty, A.OpaqueType) for p in kernel.params)
    x = np.random.default_rng(4).standard_normal(_N).astype(np.float32)
    args = {"x": x, "y": np.zeros(_N, np.float32), "n": _N}
    got = run_kernel(tu, "k", grid=(3, 1, 1), block=(32, 1, 1), args=args)["y"]
    np.testing.assert_allclose(got, want(x.astype(np.float64)), rtol=1e-5, atol=1e-4)


def test_deduced_types_follow_each_launch() -> None:
    src = """
template <typename T> __global__ void k(T* y, const T* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + x[i];
}
void a(float* y, const float* x, int n) { k<<<1, 32>>>(y, x, n); }
void b(double* y, const double* x, int n) { k<<<1, 32>>>(y, x, n); }
"""
    tu = parse_source(src, "two.cu")
    kinds = sorted(f.params[0].ty.pointee.name for f in tu.kernels)
    assert kinds == ["float32", "float64"], [f.name for f in tu.kernels]
    assert sorted(s.instance for s in tu.launch_sites) == ["k<float32>", "k<float64>"]


@pytest.mark.parametrize(
    ("body", "code", "what"),
    [
        # a function template parameter read as a value
        (
            "template <float (*op)(float)> __device__ float g(float v) { "
            "return op == nullptr ? 0.0f : v; }\n__device__ float h(float v) { return v; }\n"
            "__global__ void k(float* y) { y[0] = g<h>(1.0f); }",
            "C2N1010",
            "op",
        ),
        # a template argument that is not a device function
        (
            "template <float (*op)(float)> __device__ float g(float v) { return op(v); }\n"
            "__global__ void k(float* y) { y[0] = g<3>(1.0f); }",
            "C2N1024",
            "device function",
        ),
        # a qualified call of a namespace that does not define the function
        (
            "namespace a { __device__ float f(float v) { return v; } }\n"
            "__global__ void k(float* y) { y[0] = b::f(1.0f); }",
            "C2N1021",
            "b::f",
        ),
    ],
)
def test_misuses_are_refused_by_id(body: str, code: str, what: str) -> None:
    tu = parse_source(body, "bad.cu")
    diags = [d for d in tu.rejected.get("k", ()) if d.code == code]
    assert diags and what in diags[0].message, tu.rejected
    assert diags[0].loc.line >= 1 and diags[0].loc.col >= 1


def test_vector_overload_of_a_math_function_calls_the_scalar_one(parse):
    # helper_math.h style: the vector overloads call the intrinsic on each lane
    tu = parse(
        "inline __device__ float2 floorf(float2 v) { return make_float2(floorf(v.x), floorf(v.y)); }\n"
        "inline __device__ float2 fminf(float2 a, float2 b) {\n"
        "    return make_float2(fminf(a.x, b.x), fminf(a.y, b.y));\n}\n"
        "__device__ float fminf(float a, int b) { return a; }\n"
        "__global__ void k(float2* p, float* q) {\n"
        "    p[0] = fminf(floorf(p[0]), p[1]);\n    q[0] = fminf(q[1], 2);\n}\n"
    )
    assert tu.rejected == {}, tu.diagnostics
    f = tu.function("floorf")
    inner = [c for c in find(f, A.Call) if c.func == "floorf"]
    assert len(inner) == 2 and all(c.target is None for c in inner)  # the intrinsic
    k = tu.function("k")
    assert {c.target for c in find(k, A.Call) if c.func == "fminf"} == {
        "fminf(float2, float2)",
        "fminf(float32, int32)",  # a scalar user overload of the same arity is still chosen
    }
