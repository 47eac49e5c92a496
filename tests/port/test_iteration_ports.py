"""Elementwise loops whose trip count the data decide, bounded by a counter (``do { ... } while
(err > tol && it < K)``): lifted as one iteration (an ``iterate`` in the intent IR) and lowered to a
trace-time loop of K steps with a per-element active mask.  Each spelling is ported on both targets
and compared exactly with the SIMT interpreter (every thread iterates until its own condition
fails); a loop no counter bounds is refused."""

from __future__ import annotations

import re

import pytest

from cuda2nki.ir.nodes import Iterate
from cuda2nki.passes._analysis import walk
from tests.port.acceptance import grid_binding as _b
from tests.port.acceptance import port_variant
from tests.port.acceptance import tensor_param as _t

ITER_VARIANTS = [
    (
        "iterate/do_while_newton_renamed",
        """
__global__ void k(const float* v, float* out, int* steps, int len) {
    int e = threadIdx.x + blockDim.x * blockIdx.x;
    if (e < len) {
        float s = v[e];
        float g = s * 0.5f + 0.5f;
        float last;
        int count = 0;
        do {
            last = g;
            g = (g + s / g) * 0.5f;
            count++;
        } while (fabsf(g - last) > 2e-6f * g && count < 40);
        out[e] = g;
        steps[e] = count;
    }
}""",
        _b(
            ["ceil_div(len, 128)"],
            {
                "v": _t(["len"], "in", rng=[0.01, 500.0]),
                "out": _t(["len"], "out"),
                "steps": _t(["len"], "out", "int32"),
                "len": 1000,
            },
            [{"len": 129}, {"len": 3000}],
        ),
    ),
    (
        "iterate/while_counter_param_grid_stride",
        """
__global__ void k(const float* c, float* z, int* used, int n, int maxit) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float x = 0.0f, y = 0.0f;
        float cr = c[i];
        int k = 0;
        while (x * x + y * y < 4.0f && k < maxit) {
            float nx = x * x - y * y + cr;
            y = 2.0f * x * y + 0.25f;
            x = nx;
            k += 1;
        }
        z[i] = x * x + y * y;
        used[i] = k;
    }
}""",
        _b(
            [4],
            {
                "c": _t(["n"], "in", rng=[-2.0, 0.5]),
                "z": _t(["n"], "out"),
                "used": _t(["n"], "out", "int32"),
                "n": 700,
                "maxit": 30,
            },
            [{"n": 1}, {"n": 1500, "maxit": 7}],
        ),
    ),
    (
        "iterate/unsigned_collatz_bitwise",
        """
__global__ void k(const unsigned int* seed, unsigned int* last, unsigned int* taken,
                  unsigned int n) {
    unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    unsigned int x = seed[t] | 1u;
    unsigned int steps = 0u;
    do {
        x = (x & 1u) ? x * 3u + 1u : x >> 1;
        ++steps;
    } while (x != 1u && steps < 25u);
    last[t] = x ^ 0x9e3779b9u;
    taken[t] = steps;
}""",
        _b(
            ["ceil_div(n, 128)"],
            {
                "seed": _t(["n"], "in", "uint32", [0, 2**32 - 1]),
                "last": _t(["n"], "out", "uint32"),
                "taken": _t(["n"], "out", "uint32"),
                "n": 600,
            },
            [{"n": 127}, {"n": 5}],
        ),
    ),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("vid", "src", "bdict"), ITER_VARIANTS, ids=[v[0] for v in ITER_VARIANTS])
def test_bounded_iterations_port_exactly(vid, src, bdict, target, tmp_path) -> None:
    res, run, points = port_variant(vid, src, bdict, target, tmp_path, tol=0.0)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    reads = [c for c in res.ir_intent.body if any(isinstance(x, Iterate) for x in walk(c.expr))]
    assert len(reads) == 2
    # both results come from one run of the loop: one iteration loop per chunk loop
    lines = res.source.split("@nki.jit")[1].splitlines()  # the kernel, not the helpers
    chunks = [ln for ln in lines if ln.startswith("    for ")]
    assert len([ln for ln in lines if re.search(r"for _k\d* in", ln)]) == len(chunks)


NO_COUNTER = """
__global__ void k(const float* a, float* r, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i] > 1.0f ? a[i] : 1.0f;
    do {
        x = 0.5f * (x + a[i] / x);
    } while (fabsf(x * x - a[i]) > 1e-3f * a[i]);
    r[i] = x;
}"""


def test_a_loop_no_counter_bounds_is_refused(tmp_path) -> None:
    from cuda2nki import api
    from tests.port.acceptance import port_source

    binding = """
kernel = "k"
[launch]
grid = ["ceil_div(n, 128)"]
block = [128]
[params]
a = { shape = ["n"], dtype = "float32", role = "in", range = [0.5, 10.0] }
r = { shape = ["n"], dtype = "float32", role = "out" }
n = 300
"""
    cu, toml = tmp_path / "k.cu", tmp_path / "k.toml"
    cu.write_text(NO_COUNTER)
    toml.write_text(binding)
    res = api.port(cu, binding=toml, lowering="recognise")
    assert res.source is None
    assert any(d.code == "C2N2019" and "do-while" in d.message for d in res.diagnostics)
    auto = api.port(cu, binding=toml)
    assert auto.source is None or auto.literal  # never a recognised port of an unbounded loop
    del port_source
