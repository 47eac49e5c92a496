"""GNU statement expressions with ``__typeof__`` (the once-evaluating ``min``/``max`` macros of
generated code): the last expression with each declared name replaced by its initial value;
side effects and other statements refused."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.simt import run_kernel

_MACROS = """\
#define pmin(x,y)    ({ __typeof__(x) _x = (x); __typeof__(y) _y = (y); _x < _y ? _x : _y; })
#define pmax(x,y)    ({ __typeof(x) _a = (x); __typeof(y) _b = (y); _a > _b ? _a : _b; })
"""


def _run(tu, name, n, **arrays):
    args = {"n": n, **arrays}
    return run_kernel(tu, name, grid=(1,), block=(64,), args=args)


def test_min_in_a_loop_bound_of_generated_code(parse):
    tu = parse(
        _MACROS
        + """
__global__ void rowsum(const float* a, float* s, int n) {
    int t0 = threadIdx.x;
    float acc = 0.0f;
    for (int c1 = 0; c1 <= pmin(n - 1, 4 * t0 + 3); c1 += 1)
        acc += a[c1];
    if (t0 < n) s[t0] = acc;
}
"""
    )
    assert tu.rejected == {}, tu.diagnostics
    a = np.arange(40, dtype=np.float32)
    got = _run(tu, "rowsum", 40, a=a, s=np.zeros(40, np.float32))
    want = [a[: min(39, 4 * t + 3) + 1].sum() for t in range(40)]
    np.testing.assert_allclose(got["s"], want)


def test_nested_float_clamp_and_conversion_to_the_declared_type(parse):
    tu = parse(
        _MACROS
        + """
__global__ void clamp(const float* x, float* y, int* k, int n) {
    int i = threadIdx.x;
    if (i < n) {
        y[i] = pmax(pmin(x[i], 1.5f), -0.5f);
        k[i] = ({ int whole = x[i]; whole * 2; });
    }
}
"""
    )
    assert tu.rejected == {}, tu.diagnostics
    x = np.linspace(-3, 3, 48).astype(np.float32)
    got = _run(tu, "clamp", 48, x=x, y=np.zeros(48, np.float32), k=np.zeros(48, np.int32))
    np.testing.assert_allclose(got["y"], np.clip(x, -0.5, 1.5))
    np.testing.assert_array_equal(got["k"], np.trunc(x).astype(np.int32) * 2)


def test_decltype_of_a_name(parse):
    tu = parse("""\
__global__ void twice(const double* x, double* y, int n) {
    int i = threadIdx.x;
    decltype(i) j = i;
    if (j < n) y[j] = 2 * x[j];
}
""")
    assert tu.rejected == {}, tu.diagnostics


@pytest.mark.parametrize(
    "body",
    [
        "int v = ({ int t = a[i]++; t; });",
        "int v = ({ int t = a[i]; t += 1; t; });",
        "int v = ({ int t = atomicAdd(&a[0], 1); t; });",
        "int v = ({ int t = a[i]; });",
        "decltype(a[i]) v = a[i];",
    ],
)
def test_side_effects_and_references_are_refused(parse, body):
    tu = parse(f"""\
__global__ void k(int* a, int* b, int n) {{
    int i = threadIdx.x;
    if (i < n) {{ {body} b[i] = v; }}
}}
""")
    assert "k" in tu.rejected
    assert tu.rejected["k"][0].code == "C2N1010", tu.rejected["k"]
