"""A template launcher's non-type parameters (``template <typename T, int BS> void run(...) {
k<T, BS><<<n / BS, BS>>>(...); }``) take the constant its callers write for them: the kernel's
template arguments and the launch geometry that name them are then known, also when the block is
a ``dim3 block(BS)`` (read as a function declaration) and the call comes through a chain of
template launchers or a function-like macro."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference

KERNEL = """
template <typename T, int THREADS>
__global__ void twice(T* dst, const T* src, int count) {
    int g = blockIdx.x * THREADS + threadIdx.x;
    if (g < count) dst[g] = src[g] + src[g];
}
"""

#: spelling -> (host code, block the launch gets)
CASES = {
    "written_at_the_call": (
        """
template <typename T, int BS>
void run(T* d, const T* s, int count) {
    twice<T, BS><<<(count + BS - 1) / BS, BS>>>(d, s, count);
}
int main() { float *d, *s; run<float, 128>(d, s, 1000); return 0; }
""",
        [128],
    ),
    "value_first_then_type": (
        """
template <int WIDTH, class E>
void go(E* d, const E* s, int count) {
    dim3 threads(WIDTH);
    twice<E, WIDTH><<<(count + WIDTH - 1) / WIDTH, threads>>>(d, s, count);
}
void host(float* d, const float* s) { go<32, float>(d, s, 777); }
""",
        [32],
    ),
    "through_a_template_driver": (
        """
template <typename T, int BS>
void run(T* d, const T* s, int count) {
    dim3 grid((count + BS - 1) / BS);
    dim3 block(BS);
    twice<T, BS><<<grid, block>>>(d, s, count);
}
template <typename T>
void driver(int count) {
    T *d, *s;
    run<T, 64>(d, s, count);
    run<T, 256>(d, s, count);
}
int main() { driver<float>(500); return 0; }
""",
        [64],
    ),
    "through_a_macro_and_a_constant": (
        """
template <typename T, int BS>
void run(T* d, const T* s, int count) {
    twice<T, BS><<<(count + BS - 1) / BS, BS>>>(d, s, count);
}
template <typename T>
void driver(int count) {
    T *d, *s;
    const int wide = 2 * 64;
#define RUN(b) run<T, b>(d, s, count)
    RUN(wide);
    RUN(512);
}
int main() { driver<float>(300); return 0; }
""",
        [128],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_launchers_constant_instantiates_the_kernel_and_sizes_its_block(case: str) -> None:
    host, block = CASES[case]
    tu = parse_source(KERNEL + host, "t.cu")
    kernel = tu.kernels[0]
    assert kernel.template_args, "the kernel stays an uninstantiated template"
    bnd, diags = binding_from_inference(tu, kernel.name)
    assert bnd is not None, [d.message for d in diags if d.severity.name != "NOTE"]
    assert list(bnd.block)[: len(block)] == block
    assert bnd.tensor("dst").dtype == "float32" and bnd.tensor("dst").role == "out"


def test_a_launcher_value_no_call_writes_leaves_the_template_uninstantiated() -> None:
    host = """
template <typename T, int BS>
void run(T* d, const T* s, int count) {
    twice<T, BS><<<(count + BS - 1) / BS, BS>>>(d, s, count);
}
"""
    tu = parse_source(KERNEL + host, "t.cu")
    assert not tu.kernels[0].template_args


def test_a_lambda_argument_leaves_the_template_uninstantiated() -> None:
    """``run<64>(n, lam)`` with ``auto lam = [=] __device__ (int i) {...}``: the launcher's
    constant is known but the functor's type is not; the kernel stays an uninstantiated template
    (reported as such) rather than being lowered with a placeholder type."""
    src = """
template <int BS, typename F>
__global__ void apply(int count, F f) {
    int i = blockIdx.x * BS + threadIdx.x;
    if (i < count) f(i);
}
template <int BS, typename F>
void run(int count, F f) { apply<BS, F><<<(count + BS - 1) / BS, BS>>>(count, f); }
void host(float* y, int count) {
    auto lam = [=] __device__ (int i) { y[i] = 2.0f * y[i]; };
    run<64>(count, lam);
}
"""
    tu = parse_source(src, "t.cu")
    assert not tu.kernels[0].template_args
    assert not [d for d in tu.diagnostics if d.code == "C2N1021"]
