"""A template kernel launched from a template host launcher gets its type parameters from the
launcher's callers (``template<typename T> void launch(const T* in, ...) { k<<<...>>>(in, ...); }``
called with a ``float*``): explicit template arguments, declared types of the caller's
arguments (through a typedef), chains of launchers.  A launcher no call fixes leaves the
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
