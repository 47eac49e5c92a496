"""Lambdas in device code are inlined at their calls (see cuda2nki.frontend.lambdas):
reference captures read and write the enclosing variables, value captures read the copy
taken where the lambda was created, and a returned value is read by the calling statement."""

from __future__ import annotations

import numpy as np
import pytest
from simt_helpers import run

from cuda2nki.frontend import parse_source

# one loop body written once, used by two loops around a special middle step
SPLIT_LOOP = """
__global__ void k(const float* x, const float* w, float* out, int n, int mid) {
    int row = blockIdx.x;
    float acc[2] = {0.0f, 0.0f};
    const float* xr = x + row * n;
    LAMBDA
    int j = threadIdx.x;
    for (; j < mid; j += blockDim.x) STEP(j);
    if (j == mid) { acc[0] += 100.0f * xr[j]; j += blockDim.x; }
    for (; j < n; j += blockDim.x) {
        STEP(j);
    }
    out[row * blockDim.x + threadIdx.x] = acc[0] + acc[1];
}
"""

LAMBDAS = {
    "ref_capture": "auto step = [&](int t) {\n"
    "        float p = xr[t] * w[t];\n"
    "        for (int q = 0; q < 2; ++q) acc[q] += p * (q + 1);\n    };",
    "ref_capture_trailing_return": "auto step = [&](const int t) -> void {\n"
    "        acc[0] += xr[t] * w[t];\n        acc[1] += 2.0f * xr[t] * w[t];\n"
    "        return;\n    };",
    "device_params_renamed": "auto step = [&] (int j) mutable {\n"
    "        float j2 = xr[j] * w[j];  // the parameter shadows the caller's j\n"
    "        acc[0] += j2; acc[1] = acc[1] + j2 * 2.0f;\n    };",
}


@pytest.mark.parametrize("spelling", sorted(LAMBDAS))
@pytest.mark.parametrize(("n", "mid", "tpb"), [(40, 5, 8), (33, 32, 32), (70, 0, 16)])
def test_inlined_lambda_loop_body(spelling: str, n: int, mid: int, tpb: int) -> None:
    src = SPLIT_LOOP.replace("LAMBDA", LAMBDAS[spelling]).replace("STEP", "step")
    rows = 3
    rng = np.random.default_rng(n + mid)
    x = rng.standard_normal(rows * n).astype(np.float32)
    w = rng.standard_normal(n).astype(np.float32)
    out = run(
        src,
        grid=(rows,),
        block=(tpb,),
        x=x,
        w=w,
        out=np.zeros(rows * tpb, np.float32),
        n=n,
        mid=mid,
    )["out"]
    ref = np.zeros((rows, tpb))
    for r in range(rows):
        for t in range(tpb):
            for j in range(t, n, tpb):
                v = x[r * n + j]
                ref[r, t] += 100.0 * v if j == mid else 3.0 * v * w[j]
    np.testing.assert_allclose(out.reshape(rows, tpb), ref, rtol=1e-4, atol=1e-4)


def test_capture_free_lambda() -> None:
    src = """
    __global__ void k(int* out) {
        auto bump = [](int* p, int by) { p[threadIdx.x] += by; };
        bump(out, 3);
        bump(out, threadIdx.x);
    }"""
    out = run(src, block=(16,), out=np.ones(16, np.int32))["out"]
    np.testing.assert_array_equal(out, 4 + np.arange(16))


@pytest.mark.parametrize(
    ("body", "line"),
    [
        ("    float a[2] = {1, 2};\n    auto f = [=](int t) { o[t] = a[t]; };\n    f(0);\n", 3),
        ("    int s = 2;\n    auto f = [s](int t) mutable { s++; o[t] = s; };\n    f(0);\n", 3),
        ("    auto f = [&](int t) { o[t] = 1.0f; };\n    o[1] = f(0);\n", 3),
        ("    auto f = [&](int t) { return o[t]; };\n    o[1] = 2 * f(0);\n", 3),
        ("    auto f = [&](int t) { o[t] = 1.0f; };\n    o[2] = f(0) + 1;\n", 3),
        (
            "    float v = 1.0f;\n    auto f = [&](int t) { o[t] = v; };\n"
            "    { float v = 2.0f; f(0); }\n",
            4,
        ),
    ],
)
def test_lambda_uses_left_refused(body: str, line: int) -> None:
    src = "__global__ void k(float* o) {\n" + body + "}\n"
    tu = parse_source(src, "k.cu")
    diags = tu.rejected.get("k")
    assert diags, tu.diagnostics
    assert diags[0].code == "C2N1010" and diags[0].loc.line == line, diags


# (lambda, uses): captures by value and by reference, values returned to statements
CAPTURES = {
    "copy-all": (
        "auto f = [=](float v) { return v * scale + t; };",
        "float a = f(x[t]); out[3 * t] = a; out[3 * t + 1] = f(1.0f); out[3 * t + 2] = acc;",
    ),
    "copy-named-ref-named": (
        "auto f = [&acc, scale, t](float v) -> float { acc += v; return v * scale + t; };",
        "out[3 * t] = f(x[t]); out[3 * t + 1] = f(1.0f); out[3 * t + 2] = acc;",
    ),
    "ref-default-copy-one": (
        "auto f = [&, scale](const float v) { acc = acc + v; return (v * scale) + t; };",
        "float a; a = f(x[t]); out[3 * t] = a; out[3 * t + 1] = 0.0f;\n"
        "    out[3 * t + 1] += f(1.0f); out[3 * t + 2] = acc;",
    ),
    "copy-default-ref-one": (
        "auto f = [=, &acc](float v) { acc += v; float r = v * scale; return r + t; };",
        "const float a = f(x[t]); out[3 * t] = a; out[3 * t + 1] = f(1.0f);\n"
        "    out[3 * t + 2] = acc;",
    ),
}


@pytest.mark.parametrize("spelling", sorted(CAPTURES))
def test_value_captures_and_returned_values(spelling: str) -> None:
    lam, uses = CAPTURES[spelling]
    src = f"""__global__ void k(const float* x, float* out) {{
    int t = threadIdx.x;
    float scale = 2.0f;
    float acc = 0.0f;
    {lam}
    scale = 100.0f;  // after the copy: the lambda still sees 2
    {uses}
}}
"""
    x = np.arange(4, dtype=np.float32) + 1
    got = run(src, block=(4,), x=x, out=np.zeros(12, np.float32))["out"].reshape(4, 3)
    t = np.arange(4)
    np.testing.assert_allclose(got[:, 0], x * 2 + t)
    np.testing.assert_allclose(got[:, 1], 2 + t)
    if "acc" in lam:
        np.testing.assert_allclose(got[:, 2], x + 1)
    else:
        np.testing.assert_allclose(got[:, 2], 0)


# lambdas that return before their end: (lambda, use, expected out[t] for t = threadIdx.x)
EARLY = {
    "switch-returns": (
        "auto pick = [&](unsigned idx) -> const uint4 {\n"
        "        switch (idx) { case 0: return r.x; case 1: return r.y; case 2: return r.z; }\n"
        "        return {};\n    };",
        "uint4 q = pick(t % 4); out[t] = q.x + q.y + q.z + q.w;",
        lambda t: [4, 8, 12, 0][t % 4],
    ),
    "loop-return-auto": (
        "auto first = [&](int from) {\n"
        "        for (int i = from; i < 8; i++) { if (x[i] > 4.0f) return i; }\n"
        "        return -1;\n    };",
        "out[t] = first(t);",
        lambda t: max(t, 4) if t < 8 else -1,
    ),
    "nested-loops-void": (
        "auto mark = [&](int t) {\n"
        "        for (int i = 0; i < 4; i++)\n"
        "            for (int j = 0; j < 4; j++) { if (i * 4 + j == t) return; out[t] += 1; }\n"
        "        out[t] = 100;\n    };",
        "out[t] = 0; mark(t);",
        lambda t: t,
    ),
    "if-else-chain": (
        "auto sign = [](float v) -> int { if (v > 5.0f) { return 1; } else if (v < 2.0f) return -1;"
        " int z = 0; return z; };",
        "out[t] = sign(x[t]);",
        lambda t: 1 if t + 1 > 5 else -1 if t + 1 < 2 else 0,
    ),
}


@pytest.mark.parametrize("spelling", sorted(EARLY))
def test_early_returns_end_the_inlined_call(spelling: str) -> None:
    lam, use, want = EARLY[spelling]
    src = f"""struct packed {{ uint4 x, y, z; }};
__global__ void k(const float* x, unsigned int* out) {{
    int t = threadIdx.x;
    packed r;
    r.x = make_uint4(1, 1, 1, 1);
    r.y = make_uint4(2, 2, 2, 2);
    r.z = make_uint4(3, 3, 3, 3);
    {lam}
    {use}
}}
"""
    x = np.arange(16, dtype=np.float32) + 1
    got = run(src, block=(16,), x=x, out=np.zeros(16, np.uint32))["out"]
    np.testing.assert_array_equal(got.view(np.int32), [want(t) for t in range(16)])
