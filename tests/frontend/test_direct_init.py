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


FILE_SCOPE = {
    "product": "constexpr unsigned int W(2);\nconstexpr unsigned int H(2);\n"
    "constexpr unsigned int TILE(W * H);",
    "two_declarators": "const int A0(4);\nconst int B0(A0), TILE(B0);",
    "macro_then_name": "#define BASE 4\nconstexpr int HALF(BASE);\nconstexpr unsigned TILE(HALF);",
}


@pytest.mark.parametrize("spelling", sorted(FILE_SCOPE))
def test_file_scope_constants_by_direct_initialisation(tmp_path: Path, spelling: str) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        f"""{FILE_SCOPE[spelling]}
constexpr float SCALE(1.0f / TILE);
__global__ void tiles(float* out, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (i % TILE) * SCALE;
}}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    got = run_kernel(
        tu, "tiles", grid=(2,), block=(8,), args={"out": np.zeros(16, np.float32), "n": 16}
    )["out"]
    np.testing.assert_allclose(got, (np.arange(16) % 4) * np.float32(0.25))


def test_a_file_scope_prototype_stays_a_prototype(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        """const int twice(int v);
__device__ int twice(int v) { return 2 * v; }
__global__ void k(int* out) { out[threadIdx.x] = twice(threadIdx.x); }
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    got = run_kernel(tu, "k", grid=(1,), block=(4,), args={"out": np.zeros(4, np.int32)})["out"]
    np.testing.assert_array_equal(got, np.arange(4) * 2)
