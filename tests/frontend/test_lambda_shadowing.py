"""Lambdas called where names they declare or copy are shadowed: their own parameters and
locals, and captures by value, mean what they meant at the lambda; a capture by reference that
is shadowed at the call stays refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

BODIES = {
    # a lambda copying by value calls another one inside (its copies re-declared there)
    "nested_by_value": """
    auto offset = [=](int r, int c) { return r * cols + c; };
    auto apply = [=](int r, int c) {
        int at = offset(r, c);
        ys[at] = xs[at] * gain + 0.0f * cols;
    };
    int r = t / cols, c = t % cols;
    apply(r, c);""",
    # parameters named like variables of the kernel, shadowed again at the call
    "params_named_like_outer": """
    int r = 0, c = 0;
    auto apply = [&](int r, int c) { ys[r * cols + c] = xs[r * cols + c] * gain; };
    for (int r = t / cols; r < t / cols + 1; r++) { int c = t % cols; apply(r, c); }""",
    # a local of the body named like a variable of the kernel, shadowed again at the call
    "body_local_like_outer": """
    float v = 0.0f;
    auto apply = [&](int at) { float v = xs[at] * gain; ys[at] = v; };
    { float v = 1.0f; apply(t + (int)v - 1); }""",
    # by value, called where a captured name is shadowed: the copy is what it reads
    "copy_shadowed_at_call": """
    auto apply = [=](int at) { ys[at] = xs[at] * gain; };
    { float gain = 0.0f; apply(t + (int)gain); }""",
    # arguments named like the parameters, crossed
    "crossed_arguments": """
    auto apply = [&](int c, int r) { ys[r * cols + c] = xs[r * cols + c] * gain; };
    int r = t % cols, c = t / cols;
    apply(r, c);""",
}


@pytest.mark.parametrize("spelling", sorted(BODIES))
def test_lambda_called_under_shadowing_names(tmp_path: Path, spelling: str) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        f"""__global__ void scale2d(const float* xs, float* ys, int rows, int cols, float gain) {{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= rows * cols) return;{BODIES[spelling]}
}}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    xs = np.arange(12, dtype=np.float32)
    args = {"xs": xs, "ys": np.zeros(12, np.float32), "rows": 3, "cols": 4, "gain": 1.5}
    got = run_kernel(tu, "scale2d", grid=(2,), block=(8,), args=args)["ys"]
    np.testing.assert_array_equal(got, xs * 1.5)


def test_a_shadowed_reference_capture_stays_refused(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        """__global__ void k(float* ys, float gain) {
    auto apply = [&](int at) { ys[at] *= gain; };
    { float gain = 2.0f; apply(threadIdx.x); }
}
"""
    )
    tu = parse_file(path)
    (d,) = tu.rejected["k"]
    assert d.code == "C2N1010" and "'gain' is shadowed" in d.message and d.loc.line == 3
