"""A template argument naming a scoped enumerator or a namespace's constant (``k<float,
Mode::Safe>``, ``k<cfg::WIDTH>``), which the grammar reads as a qualified type, is its value:
the kernel is instantiated at the launch (directly, through a template launcher) and its binding
is inferred."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference

KERNEL = """
enum class Mode { Fast, Safe };
template <typename T, Mode M>
__global__ void twice(T* y, const T* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (M == Mode::Fast) ? x[i] * (T)2 : x[i] + x[i];
}
"""

#: spelling -> (source, the instance's template arguments)
CASES = {
    "scoped-enum-at-the-launch": (
        KERNEL
        + """
int main() {
    int n = 1000; float *x, *y;
    twice<float, Mode::Safe><<<(n + 127) / 128, 128>>>(y, x, n);
    return 0;
}
""",
        1,
    ),
    "scoped-enum-in-a-template-launcher": (
        KERNEL
        + """
template <typename T>
void run(int n) {
    T *x, *y;
    dim3 grid((n + 63) / 64);
    twice<T, Mode::Fast><<<grid, 64>>>(y, x, n);
}
int main() { run<float>(700); return 0; }
""",
        0,
    ),
    "namespace-constant": (
        """
namespace cfg { const int WIDTH = 4; }
template <int W>
__global__ void twice(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * W;
}
void go(float* y, const float* x, int n) { twice<cfg::WIDTH><<<(n + 255) / 256, 256>>>(y, x, n); }
""",
        4,
    ),
    "unscoped-enum-qualified": (
        """
enum Kind { Plain = 2, Heavy = 5 };
template <Kind K>
__global__ void twice(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * (int)K;
}
int main() { int n = 64; float *x, *y; twice<Kind::Heavy><<<1, 64>>>(y, x, n); return 0; }
""",
        5,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_qualified_constant_instantiates_the_kernel(case: str) -> None:
    src, value = CASES[case]
    tu = parse_source(src, "k.cu")
    (kernel,) = tu.kernels
    assert kernel.template_args, "the kernel stays an uninstantiated template"
    assert kernel.template_args[-1][1] == value
    bnd, diags = binding_from_inference(tu, kernel.name)
    assert bnd is not None, [d.message for d in diags if d.severity.name != "NOTE"]
