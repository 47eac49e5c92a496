"""An element chosen by a ternary in its index, ``x[c ? i : j]``, is the load of whichever is
taken, ``c ? x[i] : x[j]`` (as a clamp ``x[min(i, j)]`` is): the index stays affine, so the
kernel lifts to its idiom instead of a gather through a data-dependent index (which the
scheduler cannot place), and the port matches the CUDA kernel."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.api import lift
from cuda2nki.binding import load_binding
from cuda2nki.frontend import parse_source
from cuda2nki.ir.printer import to_text
from tests.port.acceptance import check_kernel

#: the next element, or the element itself at the end
NEXT_OR_SELF = """
__global__ void step_diff(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i + 1 < n ? i + 1 : i] - x[i];
}
void run(const float* x, float* y, int n) { step_diff<<<(n + 255) / 256, 256>>>(x, y, n); }
"""
#: the previous column of a row, the first column for itself
PREV_COLUMN = """
__global__ void col_diff(const float* x, float* y, int rows, int cols) {
    int r = blockIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows && c < cols) {
        int left = c > 0 ? c - 1 : 0;
        y[r * cols + c] = x[r * cols + c] - x[r * cols + left];
    }
}
void run(const float* x, float* y, int rows, int cols) {
    dim3 g((cols + 127) / 128, rows);
    col_diff<<<g, 128>>>(x, y, rows, cols);
}
"""
#: a row maximum whose first load clamps the column of threads past the row to column 0
ROW_MAX = """
__global__ void row_top(const float* in, float* out, int rows, int cols) {
    __shared__ float part[128];
    int b = blockIdx.x, t = threadIdx.x;
    float m = in[b * cols + (t < cols ? t : 0)];
    for (int c = t + 128; c < cols; c += 128) m = fmaxf(m, in[b * cols + c]);
    part[t] = m;
    __syncthreads();
    for (int s = 64; s > 0; s >>= 1) {
        if (t < s) part[t] = fmaxf(part[t], part[t + s]);
        __syncthreads();
    }
    if (t == 0) out[b] = part[0];
}
void run(const float* in, float* out, int rows, int cols) { row_top<<<rows, 128>>>(in, out, rows, cols); }
"""

#: case -> (source, kernel, idiom, pieces of the lifted intent): a chosen index reads as a select
#: of the two loads; the row maximum's chosen seed then joins the rest of the row, one fold
CASES = {
    "next_or_self": (NEXT_OR_SELF, "step_diff", "stencil", ("select(", "x[1 + i]")),
    "prev_column": (PREV_COLUMN, "col_diff", "map", ("select(", "x[i, -1 + j]")),
    "row_max": (ROW_MAX, "row_top", "reduce", ("reduce(max, j < cols: in[i, j];",)),
}


_TOMLS = {
    "next_or_self": """kernel = "step_diff"
[launch]
grid = ["ceil_div(n, 256)"]
block = [256]
[params]
x = { shape = ["n"], dtype = "float32", role = "in" }
y = { shape = ["n"], dtype = "float32", role = "out" }
n = 300
[[check.shapes]]
n = 129
""",
    "prev_column": """kernel = "col_diff"
[launch]
grid = ["ceil_div(cols, 128)", "rows"]
block = [128]
[params]
x = { shape = ["rows", "cols"], dtype = "float32", role = "in" }
y = { shape = ["rows", "cols"], dtype = "float32", role = "out" }
rows = 20
cols = 150
[[check.shapes]]
rows = 3
cols = 1
""",
    "row_max": """kernel = "row_top"
[launch]
grid = ["rows"]
block = [128]
[params]
in = { shape = ["rows", "cols"], dtype = "float32", role = "in" }
out = { shape = ["rows"], dtype = "float32", role = "out" }
rows = 40
cols = 300
[check]
rtol = 0.0
atol = 0.0
[[check.shapes]]
rows = 5
cols = 7
""",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_chosen_index_lifts_to_the_idiom(case: str, tmp_path: Path) -> None:
    src, kernel, idiom, pieces = CASES[case]
    (tmp_path / "b.toml").write_text(_TOMLS[case])
    binding = load_binding(tmp_path / "b.toml")
    got = lift(parse_source(src, "c.cu"), kernel, binding=binding)
    assert got.claimed and got.idiom == idiom, [d.message for d in got.diagnostics]
    text = to_text(got.intent.body[0], locs=False)
    assert all(p in text for p in pieces), text


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_chosen_index_ports_match_the_cuda_kernel(case: str, target: str, tmp_path: Path) -> None:
    cu = tmp_path / f"{case}.cu"
    cu.write_text(CASES[case][0])
    cu.with_suffix(".toml").write_text(_TOMLS[case])
    out = check_kernel(cu, target, tmp_path, max_points=2)
    assert out.status == "match" and out.idiom == CASES[case][2], out
