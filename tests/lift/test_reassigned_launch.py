"""A host local assigned again before each launch (``threads = dim3(16, 16); k1<<<..>>>;
threads = dim3(32, 8); k2<<<..>>>``): each launch takes the latest assignment on its way, not
the first one after the declaration nor the initializer; an assignment in a branch still goes
through the branch rules."""

from __future__ import annotations

import pytest

from cuda2nki.binding import eval_c_expr
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

KERNELS = """
#define NPTS 4096
__global__ void first(const float* a, float* b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    b[i] = a[i] + 1.0f;
}
__global__ void second(const float* a, float* b) {
    int i = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    b[i] = a[i] * 2.0f;
}
__global__ void third(const float* a, float* b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    b[i] = a[i] - 3.0f;
}
"""

HOSTS = {
    # declared without a value, assigned before every launch
    "dim3-declared-then-assigned": """
void run(const float* a, float* b) {
    dim3 grid, block;
    grid = dim3(NPTS / 128);
    block = dim3(128);
    first<<<grid, block>>>(a, b);
    grid = dim3(NPTS / 256);
    block = dim3(32, 8);
    second<<<grid, block>>>(a, b);
    block = dim3(64);
    grid = dim3(NPTS / block.x);
    third<<<grid, block>>>(a, b);
}""",
    # an initializer, then a reassignment of the same name
    "initialised-then-reassigned": """
void run(const float* a, float* b) {
    int threads = 128;
    first<<<NPTS / threads, threads>>>(a, b);
    dim3 shape(32, 8);
    second<<<NPTS / 256, shape>>>(a, b);
    threads = 64;
    third<<<(NPTS + threads - 1) / threads, threads>>>(a, b);
}""",
    # a value computed from the previous one
    "reassigned-from-itself": """
void run(const float* a, float* b) {
    unsigned bs = 32;
    bs = bs * 4;
    first<<<NPTS / bs, bs>>>(a, b);
    second<<<dim3(NPTS / 256), dim3(32, 8)>>>(a, b);
    bs = bs / 2;
    third<<<NPTS / bs, bs>>>(a, b);
}""",
}

WANT = {"first": ([128], 32), "second": ([32, 8], 16), "third": ([64], 64)}


def _launch(src: str, kernel: str) -> tuple[list, int]:
    tu = parse_source(KERNELS + src, "reassigned.cu")
    partial, diags = infer_binding(tu, kernel)
    launch = partial.get("launch")
    assert launch is not None, [str(d) for d in diags]
    block = [b for b in launch["block"] if b != 1] or [1]
    grid = [int(eval_c_expr(str(g), {})) for g in launch["grid"]]
    return block, grid[0]


@pytest.mark.parametrize("host", sorted(HOSTS))
@pytest.mark.parametrize("kernel", sorted(WANT))
def test_each_launch_takes_the_latest_assignment(host: str, kernel: str) -> None:
    assert _launch(HOSTS[host], kernel) == WANT[kernel]


def test_an_assignment_in_a_branch_keeps_the_branch_rules() -> None:
    src = """
void run(const float* a, float* b, int n) {
    int threads = 256;
    if (NPTS < 1024) threads = 32;
    first<<<NPTS / threads, threads>>>(a, b);
}"""
    assert _launch(src, "first") == ([256], 16)  # the condition is false for the host's values
