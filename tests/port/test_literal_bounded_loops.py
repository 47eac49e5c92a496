"""Loops whose trip count depends on data in the literal lowering: when a counter bounds the
trip count (``it < K`` in the condition, ``it`` starting at a literal and stepped by one exactly
once per iteration), the port runs that many iterations with a per-thread active mask; without
such a counter the loop runs on the device (:mod:`tests.port.test_literal_runtime_loops`)."""

from __future__ import annotations

import pytest

from tests.port.test_literal import _kernel, _matches
from tests.port.test_literal_runtime_loops import runs_on_device

_PARAMS = (
    'y = { shape = ["n"], dtype = "float32", role = "out" }\n'
    'steps = { shape = ["n"], dtype = "int32", role = "out" }\n'
    'x = { shape = ["n"], dtype = "float32", role = "in", range = [0.01, 500.0] }\n'
    "n = 300\nmaxit = 40"
)

LOOPS = {
    "do_while_prefix_increment": """
__global__ void k(float* y, int* steps, const float* x, int n, int maxit) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], r = a > 1.0f ? a : 1.0f, prev;
    int it = 0;
    do {
        prev = r;
        r = 0.5f * (r + a / r);
        ++it;
    } while (fabsf(r - prev) > 1e-5f * r && it < maxit);
    y[i] = r;
    steps[i] = it;
}
""",
    "while_mirrored_bound_counter_at_end": """
__global__ void k(float* y, int* steps, const float* x, int n, int maxit) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n) {
        float v = x[i];
        int count;
        count = 1;
        while (maxit >= count && v > 1.5f) {
            v = v * 0.75f - 0.1f;
            count = count + 1;
        }
        y[i] = v;
        steps[i] = count;
    }
}
""",
    "for_loop_with_data_condition": """
__global__ void k(float* y, int* steps, const float* x, int n, int maxit) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    int k;
    for (k = 0; v > 2.0f && k < 2 * maxit; k += 1) {
        if (v > 100.0f) v = v * 0.25f; else v = v - 1.0f;
    }
    y[i] = v;
    steps[i] = k;
}
""",
}


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_counter_bounded_data_loops(tmp_path, name):
    cu = _kernel(tmp_path, LOOPS[name], "k", '"ceil_div(n, 64)"', "64", _PARAMS,
                 ["n = 1\nmaxit = 3", "n = 129\nmaxit = 1"])  # fmt: skip
    _matches(cu, tmp_path)


@pytest.mark.parametrize(
    "loop",
    [
        "    int it = 0;\n    while (v > 1.0f && it < 10) { v *= 0.5f; if (v > 3.0f) it++; }\n",
        "    int it = 0;\n    while (v > 1.0f && it < 10) { v *= 0.5f; it++; it--; }\n",
        "    int it = 0;\n    for (int j = 0; j < 2; ++j) {\n"
        "        do { v *= 0.5f; ++it; } while (v > 1.0f && it < 10);\n    }\n",
    ],
)
def test_loops_without_a_counter_bound_run_on_the_device(tmp_path, loop):
    src = (
        "__global__ void r(const float* x, float* y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    float v = x[i];\n" + loop + "    if (i < n) y[i] = v;\n}\n"
    )
    cu = _kernel(tmp_path, src, "r", '"ceil_div(n, 32)"', "32",
                 'x = { shape = ["n"], dtype = "float32", role = "in", range = [0.0, 90.0] }\n'
                 'y = { shape = ["n"], dtype = "float32", role = "out" }\nn = 64',
                 ["n = 96", "n = 32"])  # fmt: skip
    port = runs_on_device(cu, tmp_path)
    assert "range(max(" not in port  # not a trace-time loop a counter bounds
