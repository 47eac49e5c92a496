"""fuse-loops: statements lowered to tile loops over the same ranges share one loop sequence (and
so their loads); what it must leave alone; and that fused CUDA kernels port and check clean."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki import api
from cuda2nki.fidelity.check import check
from cuda2nki.ir.evaluate import evaluate
from cuda2nki.ir.evaluate_tiles import evaluate_tiles
from cuda2nki.ir.nodes import Load, Loop
from cuda2nki.ir.parser import parse
from cuda2nki.ir.printer import to_text
from cuda2nki.passes import DEFAULT_PIPELINE, PassContext, parse_pipeline, run_pipeline
from tests.port.acceptance import port_source

WITHOUT = DEFAULT_PIPELINE.replace("fuse-loops,", "")


def _kernel(head: str, *stmts: str):
    return parse(head + "".join(f"  map: {s};\n" for s in stmts) + "}\n", "k.ir")


def _lower(kernel, spec: str = DEFAULT_PIPELINE):
    return run_pipeline(kernel, parse_pipeline(spec), PassContext())


def _loops(kernel) -> list[Loop]:
    return [s for s in kernel.body if isinstance(s, Loop)]


def _loads(stmts) -> list[Load]:
    out = []
    for s in stmts:
        if isinstance(s, Load):
            out.append(s)
        elif isinstance(s, Loop):
            out.extend(_loads(s.body))
    return out


def _same_results(intent, tiles, inputs: dict, scalars: dict) -> None:
    want = evaluate(intent, inputs, scalars)
    got = evaluate_tiles(tiles, inputs, scalars)
    for name, arr in want.items():
        np.testing.assert_allclose(got[name], arr, rtol=1e-6, atol=1e-6, err_msg=name)


FLAT = "kernel k(x: in float32[n], g: in float32[n], y: inout float32[n], z: out float32[n], n: int32, s: float32) {\n"
OUTS = "kernel k(x: in float32[n], z: out float32[n], w: out float32[n], n: int32) {\n"
PAIRS = "kernel k(x: in float32[T, R, 2 * C], y: out float32[T, R, 2 * C], T: int32, R: int32, C: int32) {\n"
WIDE = "kernel k(x: in float32[2 * n], a: out float32[2 * n], b: out float32[2 * n], c: out float32[2 * n], n: int32) {\n"

FUSABLE = [
    # the AdamW shape: an in-place update, then a statement recomputing it from the inputs
    (
        FLAT,
        ["y[i] = s * y[i] + g[i] for i < n", "z[j] = x[j] - (s * y[j] + g[j]) * g[j] for j < n"],
    ),
    # the same loop variable name in both statements, the inout read after its store
    (FLAT, ["y[i] = x[i] * g[i] + y[i] for i < n", "z[i] = x[i] + g[i] * y[i] for i < n"]),
    # interleaved lanes of one output, each computed from both (a rotation of pairs)
    (
        PAIRS,
        [
            "y[t, r, 2 * c] = x[t, r, 2 * c] * 0.5 - x[t, r, 2 * c + 1] for t < T, r < R, c < C",
            "y[s, a, 1 + 2 * b] = x[s, a, 2 * b] + x[s, a, 1 + 2 * b] * 0.5 for s < T, a < R, b < C",
        ],
    ),
    # three statements over a computed extent
    (
        WIDE,
        [
            "a[i] = x[i] + 1.0 for i < 2 * n",
            "b[k] = x[k] * x[k] for k < 2 * n",
            "c[q] = exp(x[q]) for q < 2 * n",
        ],
    ),
]


def _inputs(head: str, n: int) -> tuple[dict, dict]:
    rng = np.random.default_rng(3)
    if head is OUTS:
        return {"x": rng.standard_normal(n).astype(np.float32)}, {"n": n}
    if head is PAIRS:
        t, r, c = 3, n // 5 + 1, 5
        x = rng.standard_normal((t, r, 2 * c)).astype(np.float32)
        return {"x": x}, {"T": t, "R": r, "C": c}
    if head is WIDE:
        return {"x": rng.standard_normal(2 * n).astype(np.float32)}, {"n": n}
    arrs = {k: rng.standard_normal(n).astype(np.float32) for k in ("x", "g", "y")}
    return arrs, {"n": n, "s": 0.75}


@pytest.mark.parametrize("n", [1, 127, 1000, 128 * 9 + 5])
@pytest.mark.parametrize("case", range(len(FUSABLE)))
def test_statements_over_one_domain_share_their_loops(case: int, n: int) -> None:
    head, stmts = FUSABLE[case]
    intent = _kernel(head, *stmts)
    fused, apart = _lower(intent), _lower(intent, WITHOUT)
    assert len(_loops(fused)) * len(stmts) == len(_loops(apart)), to_text(fused)
    for loop in _loops(fused):  # one load per HBM window in each loop
        srcs = [ld.src for ld in _loads(loop.body)]
        assert len(srcs) == len(set(srcs)), to_text(loop)
    assert len(_loads(fused.body)) < len(_loads(apart.body))
    inputs, scalars = _inputs(head, n)
    _same_results(intent, fused, inputs, scalars)


LEFT_ALONE = [
    # the second statement reads an element of the output the first wrote (in another tile)
    (OUTS, ["z[i] = x[i] * 2.0 for i < n", "w[j] = z[0] * x[j] for j < n"]),
    # lanes of the same residue, one lane apart: the second overwrites the first's next element
    (
        PAIRS,
        [
            "y[t, r, 2 * c] = x[t, r, 2 * c] for t < T, r < R, c < C",
            "y[s, a, 2 + 2 * b] = x[s, a, 1 + 2 * b] for s < T, a < R, b < C - 1",
        ],
    ),
    # different domains
    (OUTS, ["z[i] = x[i] * 2.0 for i < n", "w[j] = x[j] for j < n - 1"]),
    # both statements write the same output (a later write must stay later)
    (OUTS, ["z[i] = x[i] for i < n", "z[j] = x[j] * 3.0 for j < n"]),
]


@pytest.mark.parametrize("case", range(len(LEFT_ALONE)))
def test_dependent_or_different_loops_stay_apart(case: int) -> None:
    head, stmts = LEFT_ALONE[case]
    intent = _kernel(head, *stmts)
    fused, apart = _lower(intent), _lower(intent, WITHOUT)
    assert len(_loops(fused)) == len(_loops(apart)), to_text(fused)
    for n in (1, 130, 1000):
        inputs, scalars = _inputs(head, n)
        _same_results(intent, fused, inputs, scalars)


# ---------------------------------------------------------------------- from CUDA, end to end

MOMENTUM = """
__global__ void sgd_momentum(float* w, float* vel, const float* g, int n, float lr, float mu) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float vi = mu * vel[i] + g[i];
    vel[i] = vi;
    w[i] = w[i] - lr * vi;
}
"""
MOMENTUM_BINDING = """
kernel = "sgd_momentum"
[launch]
grid = ["ceil_div(n, 256)"]
block = [256]
[params]
w = { shape = ["n"], dtype = "float32", role = "inout" }
vel = { shape = ["n"], dtype = "float32", role = "inout" }
g = { shape = ["n"], dtype = "float32", role = "in" }
n = 5000
lr = 0.01
mu = 0.9
[[check.shapes]]
n = 129
[[check.shapes]]
n = 128
"""

SUM_PROD = """
__global__ void sum_prod(const float* x, const float* y, float* s, float* d, int count) {
    int k = threadIdx.x + blockIdx.x * blockDim.x;
    if (k < count) {
        float a = x[k];
        float b = y[k];
        s[k] = a + b;
        d[k] = a * b - (a + b);
    }
}
"""
SUM_PROD_BINDING = """
kernel = "sum_prod"
[launch]
grid = ["ceil_div(count, 128)"]
block = [128]
[params]
x = { shape = ["count"], dtype = "float32", role = "in" }
y = { shape = ["count"], dtype = "float32", role = "in" }
s = { shape = ["count"], dtype = "float32", role = "out" }
d = { shape = ["count"], dtype = "float32", role = "out" }
count = 3001
[[check.shapes]]
count = 77
[[check.shapes]]
count = 70000
"""

SPLIT3 = """
__global__ void split3(const float* __restrict__ p, float* lo, float* hi, float* mid, int len) {
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < len; t += blockDim.x * gridDim.x) {
        float q = p[t];
        lo[t] = fminf(q, 0.0f);
        hi[t] = fmaxf(q, 0.0f);
        mid[t] = 0.5f * q;
    }
}
"""
SPLIT3_BINDING = """
kernel = "split3"
[launch]
grid = [16]
block = [512]
[params]
p = { shape = ["len"], dtype = "float32", role = "in" }
lo = { shape = ["len"], dtype = "float32", role = "out" }
hi = { shape = ["len"], dtype = "float32", role = "out" }
mid = { shape = ["len"], dtype = "float32", role = "out" }
len = 1000
[[check.shapes]]
len = 1
[[check.shapes]]
len = 4099
"""

CUDA_CASES = {
    "sgd_momentum": (MOMENTUM, MOMENTUM_BINDING),
    "sum_prod": (SUM_PROD, SUM_PROD_BINDING),
    "split3": (SPLIT3, SPLIT3_BINDING),
}


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(CUDA_CASES))
def test_fused_ports_load_each_window_once(tmp_path: Path, name: str, target: str) -> None:
    src, binding = CUDA_CASES[name]
    done = port_source(tmp_path, name, src, binding, target=target)
    res, cu = done.res, done.cu
    assert res.idiom != "literal", res.diagnostics
    apart = api.port(cu, binding=done.binding, api=target, passes=WITHOUT)
    assert len(_loops(res.ir_tiles)) < len(_loops(apart.ir_tiles))
    for loop in _loops(res.ir_tiles):
        srcs = [ld.src for ld in _loads(loop.body)]
        assert len(srcs) == len(set(srcs)), to_text(loop)
    report = check(cu, done.port, seeds=1)
    codes = [d.code for d in report.findings]
    assert "C2N5006" not in codes, codes
    assert len(report.numerics) >= 3  # the default point and two [[check.shapes]], every output
    assert all(c["classification"] == "expected" for c in report.numerics), report.numerics
    assert report.verdict == "pass", [f"{d.code} {d.message}" for d in report.findings]
