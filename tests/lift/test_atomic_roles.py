"""An atomic reads the element it updates: its target is inferred ``inout`` (the CUDA kernel
accumulates onto what the host put there, a ``cudaMemset`` or copied data), whatever the
spelling -- no index, ``&t[0]``, a guarded sum, a block leader, max/min, plain writes beside."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

HOST = """
int main() {
    %(decl)s
    cudaMalloc(&d_t, sizeof(%(ty)s));
    cudaMemset(d_t, 0, sizeof(%(ty)s));
    k<<<40, 256>>>(%(args)s);
    return 0;
}
"""

SPELLINGS = {
    "no-index": ("__global__ void k(int* t) { atomicAdd(t, 1); }", "int", "d_t"),
    "old-value-unused": (
        "__global__ void k(int* t) { int old = atomicAdd(&t[0], 2); }",
        "int",
        "d_t",
    ),
    "float-count-guarded": (
        "__global__ void k(float* t, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i < n) atomicAdd(&t[0], 1.0f);\n}",
        "float",
        "d_t, 5000",
    ),
    "leader-max": (
        "__global__ void k(int* t) { if (threadIdx.x == 0) atomicMax(t, (int)blockIdx.x); }",
        "int",
        "d_t",
    ),
}


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_atomic_targets_are_inout(name: str) -> None:
    kernel, ty, args = SPELLINGS[name]
    decl = f"{ty}* d_t;"
    tu = parse_source(kernel + HOST % {"decl": decl, "ty": ty, "args": args}, "a.cu")
    partial, diags = infer_binding(tu, "k")
    assert partial["params"]["t"]["role"] == "inout", diags


def test_a_guarded_sum_reads_its_total_and_its_input() -> None:
    src = """
__global__ void k(const float* x, float* total, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    y[i] = 2.0f * x[i];
    atomicAdd(total, x[i]);
}
int main() {
    float *x, *total, *y; int n = 1000;
    cudaMalloc(&x, n * sizeof(float)); cudaMalloc(&y, n * sizeof(float));
    cudaMalloc(&total, sizeof(float));
    k<<<(n + 127) / 128, 128>>>(x, total, y, n);
}
"""
    partial, diags = infer_binding(parse_source(src, "s.cu"), "k")
    roles = {k: v["role"] for k, v in partial["params"].items() if isinstance(v, dict)}
    assert roles == {"x": "in", "total": "inout", "y": "out"}, diags
