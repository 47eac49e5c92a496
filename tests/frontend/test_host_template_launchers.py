"""A template kernel launched from a template host launcher gets its type parameters from the
launcher's callers (``template<typename T> void launch(const T* in, ...) { k<<<...>>>(in, ...); }``
called with a ``float*``): explicit template arguments, declared types of the caller's
arguments (through a typedef, or written as a class template ``buf<T>``), chains of launchers,
explicit instantiations of the launcher (``template void launch<float>(...);``, or deduced).  A launcher no call fixes leaves the
kernel an uninstantiated template."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source
from cuda2nki.simt import run_kernel

KERNEL = """
template <typename T>
__global__ void scale(float* out, const T* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * (float)in[i];
}
"""

CASES = {
    "caller_parameter": (
        """
template <typename T>
void launch(float* out, const T* in, int n, int bs) {
    scale<<<(n + bs - 1) / bs, bs>>>(out, in, n);
}
void run(float* out, const float* in, int n) { launch(out, in, n, 128); }
""",
        "float32",
    ),
    "typedef_local": (
        """
typedef double real_t;
template <class T>
void launch(float* out, const T* in, int n) { scale<<<(n + 63) / 64, 64>>>(out, in, n); }
int main() {
    real_t* d_in; float* d_out; int n = 100;
    launch(d_out, d_in, n);
    return 0;
}
""",
        "float64",
    ),
    "explicit_argument": (
        """
template <typename T>
void launch(float* out, const void* in, int n) {
    scale<<<(n + 63) / 64, 64>>>(out, (const T*)in, n);
}
void run(float* out, const void* in, int n) { launch<int>(out, in, n); }
""",
        "int32",
    ),
    "chain_of_launchers": (
        """
template <typename T>
void inner(float* out, const T* in, int n) { scale<<<(n + 31) / 32, 32>>>(out, in, n); }
template <typename U>
void outer(float* out, U* in, int n) { inner(out, in, n); }
void run(float* out, float* in, int n) { outer(out, in, n); }
""",
        "float32",
    ),
    "explicit_instantiation": (
        """
template <typename T>
void launch(float* out, const T* in, int n) { scale<T><<<(n + 63) / 64, 64>>>(out, in, n); }
template void launch<double>(float*, const double*, int);
""",
        "float64",
    ),
    "explicit_instantiation_deduced": (
        """
template <typename E>
void apply(float* dst, E* src, int count) { scale<<<count / 128, 128>>>(dst, src, count); }
template void apply(float* dst, int* src, int count);
""",
        "int32",
    ),
    "first_explicit_instantiation_in_a_namespace": (
        """
namespace lib {
template <class T>
void launch(float* out, const T* in, int n) { scale<T><<<n, 1>>>(out, in, n); }
template void launch(float*, const short*, int);
template void launch(float*, const double*, int);
}
""",
        "int16",
    ),
    "class_template_parameter_of_an_instantiation": (
        """
template <typename V> struct buf_t { V* ptr; int len; };
template <typename T>
void launch(float* out, const buf_t<T>& b) { scale<T><<<(b.len + 31) / 32, 32>>>(out, b.ptr, b.len); }
template void launch(float*, const buf_t<double>&);
""",
        "float64",
    ),
    "class_template_of_the_callers_local": (
        """
template <typename V> struct pair_buf { V* ptr; int len; };
template <typename T>
void launch(float* out, pair_buf<T> b) { scale<T><<<(b.len + 31) / 32, 32>>>(out, b.ptr, b.len); }
int main() {
    float* out; pair_buf<int> items;
    launch(out, items);
    return 0;
}
""",
        "int32",
    ),
    "class_template_through_a_template_caller": (
        """
template <typename V> struct vec_of { V* ptr; int len; };
template <typename T>
void inner(float* out, const vec_of<T>& v) { scale<T><<<v.len, 1>>>(out, v.ptr, v.len); }
template <typename U>
float outer(float* out, const vec_of<U>& v, int steps) { inner(out, v); return 0.0f; }
template float outer(float*, const vec_of<double>&, int);
""",
        "float64",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_kernel_is_instantiated_with_what_the_callers_pass(case: str) -> None:
    src, dtype = CASES[case]
    tu = parse_source(KERNEL + src, "k.cu")
    assert tu.rejected == {}, tu.diagnostics
    (k,) = tu.kernels
    targs = dict(k.template_args)
    assert isinstance(targs.get("T"), A.ScalarType) and targs["T"].name == dtype


def test_the_instance_runs() -> None:
    tu = parse_source(KERNEL + CASES["caller_parameter"][0], "k.cu")
    (k,) = tu.kernels
    x = np.arange(10, dtype=np.float32)
    got = run_kernel(
        tu, k.name, grid=(1,), block=(16,), args={"out": np.zeros(10, np.float32), "in": x, "n": 10}
    )
    np.testing.assert_array_equal(got["out"], 2 * x)


def test_a_launcher_no_call_fixes_leaves_the_template_uninstantiated() -> None:
    src = """
template <typename T>
void launch(float* out, const T* in, int n) { scale<<<(n + 63) / 64, 64>>>(out, in, n); }
"""
    tu = parse_source(KERNEL + src, "k.cu")
    (k,) = tu.kernels
    assert k.template_params and not k.template_args
