"""Loops that repeat the same work are one pass of it (``collapse_repeats``, before the lift).

``for (i = 0; i < 500; i++) c[idx] = a[idx] + b[idx];`` stores the same values to the same
places on every iteration; the lifter saw a write conflict and the kernel went to the literal
lowering (and its check ran 500 literal iterations).  One pass of the body computes the same,
so the kernel lifts as the map it is; a count known only at run time keeps its first test.
"""

from __future__ import annotations

import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source
from cuda2nki.lift.repeats import collapse_repeats
from tests.port.acceptance import grid_binding, port_variant, tensor_param

# one element per thread, the work repeated: counter names, bounds and steps spelled apart
CONSTANT = """
__global__ void k(const float* a, const float* b, float* c, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = 0; i < 500; i++)
        c[idx] = a[idx] + b[idx];
}
"""
GUARDED = """
__global__ void k(const float* a, const float* b, float* c, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) {
        for (unsigned rep = 1; 64 >= rep; ++rep) {
            float t = a[idx] * 2.0f;
            c[idx] = t - b[idx];
        }
    }
}
"""
RUNTIME = """
__global__ void k(const float* a, const float* b, float* c, int n, int reps) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    for (int r = 0; r < reps; r += 1) {
        if (idx < n) c[idx] = a[idx] * 3.0f + b[idx];
    }
}
"""


def _binding(runtime: bool) -> dict:
    params = {
        "a": tensor_param(["n"], "in"),
        "b": tensor_param(["n"], "in"),
        "c": tensor_param(["n"], "out"),
        "n": 1024,
    }
    if runtime:
        params["reps"] = 7
    return grid_binding(["n / 128"], params, [{"n": 1024}, {"n": 384}])


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    "src,runtime",
    [(CONSTANT, False), (GUARDED, False), (RUNTIME, True)],
    ids=["constant", "guarded_inclusive", "runtime_count"],
)
def test_repeated_work_ports_as_a_map(src, runtime, target, tmp_path) -> None:
    res, run, points = port_variant("map/repeated", src, _binding(runtime), target, tmp_path, 1e-6)
    assert res.idiom == "map" and not res.literal, [d.message for d in res.diagnostics]
    assert len(points) >= 2 and not run.mismatches, run.mismatches


def _kernel(body: str) -> A.Function:
    src = (
        "__global__ void k(const float* x, float* y, float* z, int n, int reps) {\n"
        "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"{body}\n}}\n"
    )
    return parse_source(src, "k.cu").function("k")


def _loops(fn: A.Function) -> int:
    from cuda2nki.frontend.visit import walk as _walk

    return sum(isinstance(n, A.For) for n in _walk(fn.body))


@pytest.mark.parametrize(
    "body",
    [
        "    for (int i = 0; i < 10; i++) y[t] = x[t];",
        "    for (int i = 2; i <= 9; ++i) { float v = x[t] * x[t]; y[t] = v; z[t] = v + 1.0f; }",
        "    for (int i = 0; reps > i; i = i + 1) if (x[t] > 0.0f) y[t] = x[t]; else y[t] = 0.0f;",
    ],
)
def test_collapsed(body: str) -> None:
    fn = _kernel(body)
    out = collapse_repeats(fn)
    assert _loops(fn) == 1 and _loops(out) == 0


def test_a_runtime_count_keeps_the_first_test() -> None:
    out = collapse_repeats(_kernel("    for (int i = 0; i < reps; i++) y[t] = x[t];"))
    (guard,) = [s for s in out.body.body if isinstance(s, A.If)]
    assert isinstance(guard.cond, A.Binary) and guard.cond.op == "<"
    assert isinstance(guard.cond.left, A.IntLit) and guard.cond.right.name == "reps"


@pytest.mark.parametrize(
    "body",
    [
        # the body names the counter: each iteration does other work
        "    for (int i = 0; i < 10; i++) y[t * 10 + i] = x[t];",
        # it reads what it writes: each iteration builds on the last
        "    for (int i = 0; i < 10; i++) y[t] = y[t] * x[t];",
        "    for (int i = 0; i < 10; i++) y[t] += x[t];",
        # a local carried from one iteration to the next
        "    float s = 0.0f;\n    for (int i = 0; i < 10; i++) s = s + x[t];\n    y[t] = s;",
        # an effect per iteration
        "    for (int i = 0; i < 10; i++) atomicAdd(&y[0], x[t]);",
        "    for (int i = 0; i < 10; i++) { y[t] = x[t]; __syncthreads(); }",
        # a counter declared outside the loop is seen after it
        "    int i;\n    for (i = 0; i < 10; i++) y[t] = x[t];\n    z[t] = i;",
        # never runs
        "    for (int i = 0; i < 0; i++) y[t] = x[t];",
        # a step that is not one
        "    for (int i = 0; i < 10; i += 2) y[t] = x[t];",
        # the bound moves with the work
        "    for (int i = 0; i < n; i++) n = 3;",
    ],
)
def test_not_collapsed(body: str) -> None:
    fn = _kernel(body)
    assert collapse_repeats(fn) is fn
