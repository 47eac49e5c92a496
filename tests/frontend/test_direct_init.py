"""Direct initialisation that the grammar reads as a function declaration (``float lo(v);``,
``constexpr unsigned n(W * 32);``): a variable initialised from the value."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

DECLS = {
    "two_on_a_line": "float lo(v), hi(v);",
    "one_each": "float lo(v);\n    float hi(v);",
    "const_product": "const float lo(v * one), hi(v * one);",
    "template_value": "float lo(v + ZERO), hi(v);",
}


@pytest.mark.parametrize("spelling", sorted(DECLS))
def test_direct_initialised_min_max(tmp_path: Path, spelling: str) -> None:
    decl = DECLS[spelling]
    if "const " in decl:  # lo/hi are updated below: use copies
        decl += " float lo2(lo), hi2(hi);"
    lo, hi = ("lo2", "hi2") if "const " in DECLS[spelling] else ("lo", "hi")
    path = tmp_path / "k.cu"
    path.write_text(
        f"""#define WARP 32
template <int ZERO>
__global__ void span(const float* xs, float* out, int n) {{
    constexpr unsigned int per_block(4 * WARP);
    constexpr unsigned int warps(per_block / WARP);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float one(1.0f);
    float v = xs[i];
    {decl}
    for (int k = 1; k < 3; k++) {{
        float w = xs[(i + k) % n];
        if (w < {lo}) {lo} = w;
        if (w > {hi}) {hi} = w;
    }}
    out[i] = {hi} - {lo} + warps;
}}
void go(const float* xs, float* out, int n) {{ span<0><<<(n + 127) / 128, 128>>>(xs, out, n); }}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    xs = np.array([3, -1, 4, 1, -5, 9, 2, 6], np.float32)
    (name,) = [f.name for f in tu.functions if f.name.startswith("span")]
    got = run_kernel(
        tu, name, grid=(2,), block=(4,), args={"xs": xs, "out": np.zeros(8, np.float32), "n": 8}
    )["out"]
    win = np.stack([np.roll(xs, -k) for k in range(3)])
    np.testing.assert_array_equal(got, win.max(0) - win.min(0) + 4)


@pytest.mark.parametrize("decl", ["float helper(int);", "float helper();", "int f(float x);"])
def test_a_real_function_declaration_stays_refused(tmp_path: Path, decl: str) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        f"""__global__ void k(float* out) {{
    {decl}
    out[0] = 1.0f;
}}
"""
    )
    tu = parse_file(path)
    (d,) = tu.rejected["k"]
    assert d.code == "C2N1010" and "function declaration" in d.message and d.loc.line == 2
