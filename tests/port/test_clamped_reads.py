"""A 2-D stencil with clamped (replicated-edge) neighbours reads one tile per chunk and tap row,
the clamped edges filled from the tile itself: the neighbours along the free axis share one halo
tile, those along the partitions are one DMA each (the edge row broadcast over the partitions
past the grid), and no edge region is a statement of its own.  Checked over spellings of the
clamp (``min``/``max``, ternaries on the value, the equality test), radii 1 and 2, int and
float, on both targets, with our own ``check`` finding nothing above a note.  1-D windows keep
their edge pieces (one statement per edge region): their numbers match, the nested pieces of
a radius-2 window included (a bound restated on a shifted axis never starts it below 0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.diagnostics import Severity
from cuda2nki.fidelity.check import check
from cuda2nki.ir.nodes import Compute, Load, Loop
from tests.port.acceptance import grid_binding, port_variant, tensor_param

#: 5-point step, min/max spelling (the corpus heat step's shape)
MINMAX = """
__global__ void k(T* out, const T* in, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        int n = max(r - R, 0), s = min(r + R, rows - 1);
        int w = max(c - R, 0), e = min(c + R, cols - 1);
        out[r * cols + c] = in[n * cols + c] + in[s * cols + c] + in[r * cols + w]
            + in[r * cols + e] - 4 * in[r * cols + c];
    }
}
"""

#: ternaries on the value, the equality spelling for the top edge
TERNARY = """
__global__ void k(T* out, const T* in, int rows, int cols) {
    int x = threadIdx.x + blockIdx.x * blockDim.x;
    int y = threadIdx.y + blockIdx.y * blockDim.y;
    if (x >= cols || y >= rows) return;
    T up = y == 0 ? in[x] : in[(y - 1) * cols + x];
    T down = y + 1 < rows ? in[(y + 1) * cols + x] : in[(rows - 1) * cols + x];
    T left = x > 0 ? in[y * cols + x - 1] : in[y * cols];
    T right = x + 1 >= cols ? in[y * cols + cols - 1] : in[y * cols + x + 1];
    out[y * cols + x] = (up + down) * 2 + left + right + in[y * cols + x];
}
"""

#: a 1-D clamped window, min(max(...)) spelling
LINE = """
__global__ void k(const T* x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        T a = x[min(max(i - R, 0), n - 1)];
        T b = x[min(max(i + R, 0), n - 1)];
        y[i] = a + b - 2 * x[i];
    }
}
"""


#: a 1-D window of radius 2, every neighbour clamped (nested edge pieces on a shifted axis)
LINE5 = """
__global__ void k(const T* x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[max(i - 2, 0)] + x[max(i - 1, 0)] + x[i] + x[min(i + 1, n - 1)]
        + x[min(i + 2, n - 1)];
}
"""


def _grid(src: str, dtype: str, radius: int, block: tuple[int, int]) -> tuple[str, dict]:
    ctype = {"int32": "int", "float32": "float"}[dtype]
    rng = [-1000, 1000] if dtype == "int32" else None
    params = {
        "out": tensor_param(["rows", "cols"], "out", dtype),
        "in": tensor_param(["rows", "cols"], "in", dtype, rng),
        "rows": 70,
        "cols": 300,
    }
    shapes = [{"rows": 33, "cols": 129}, {"rows": 1, "cols": 5}, {"rows": 3, "cols": 1}]
    bx, by = block
    grid = [f"ceil_div(cols, {bx})", f"ceil_div(rows, {by})"]
    bind = grid_binding(grid, params, shapes)
    bind["launch"]["block"] = [bx, by]
    text = src.replace("R", str(radius)).replace("T*", f"{ctype}*").replace("T ", f"{ctype} ")
    return text.replace("4 *", "4.0f *" if ctype == "float" else "4 *"), bind


def _line(dtype: str, radius: int, src: str = LINE) -> tuple[str, dict]:
    ctype = {"int32": "int", "float32": "float"}[dtype]
    rng = [-1000, 1000] if dtype == "int32" else None
    params = {
        "x": tensor_param(["n"], "in", dtype, rng),
        "y": tensor_param(["n"], "out", dtype),
        "n": 1000,
    }
    bind = grid_binding(["ceil_div(n, 128)"], params, [{"n": 129}, {"n": 1}, {"n": 2}])
    text = src.replace("R", str(radius)).replace("T*", f"{ctype}*").replace("T ", f"{ctype} ")
    return text, bind


CASES = {
    "minmax_float_r1": _grid(MINMAX, "float32", 1, (32, 4)),
    "minmax_int_r2": _grid(MINMAX, "int32", 2, (16, 16)),
    "ternary_float": _grid(TERNARY, "float32", 1, (32, 8)),
    "ternary_int": _grid(TERNARY, "int32", 1, (64, 2)),
    "line_float_r1": _line("float32", 1),
    "line_int_r2": _line("int32", 2),
    "line5_float": _line("float32", 2, LINE5),
}
GRIDS = [name for name in CASES if not name.startswith("line")]


def _stmts(body):
    for s in body:
        yield s
        if isinstance(s, Loop):
            yield from _stmts(s.body)


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", CASES)
def test_clamped_stencil_matches(name: str, target: str, tmp_path: Path) -> None:
    src, bind = CASES[name]
    _, run, points = port_variant(f"stencil/{name}", src, bind, target, tmp_path, tol=1e-4)
    assert len(points) >= 3 and not run.mismatches, run.mismatches


@pytest.mark.parametrize("name", GRIDS)
def test_one_statement_one_halo_tile(name: str, tmp_path: Path) -> None:
    src, bind = CASES[name]
    res, _, _ = port_variant(f"stencil/{name}", src, bind, "nki", tmp_path, tol=1e-4)
    computes = [c for c in res.ir_intent.body if isinstance(c, Compute)]
    assert len(computes) == 1
    loads = [s for s in _stmts(res.ir_tiles.body) if isinstance(s, Load)]
    # per chunk: the free-axis halo tile, the row above and the row below (each with its edge
    # row), the output's own input tile at most -- never a load per edge region
    full = [ld for ld in loads if ld.src.tensor == "in"]
    assert len(full) <= 8, res.source
    assert any(s.startswith("in_h") for s in {ld.dst.tensor for ld in full}), res.source


@pytest.mark.parametrize(
    "name", ["minmax_float_r1", "minmax_int_r2", "ternary_float", "line_int_r2"]
)
def test_port_has_nothing_above_a_note(name: str, tmp_path: Path) -> None:
    src, bind = CASES[name]
    res, _, _ = port_variant(f"stencil/{name}", src, bind, "nki", tmp_path, tol=1e-4)
    cu = tmp_path / f"{name}.cu"
    port = tmp_path / f"{name}_checked.py"
    port.write_text(res.source)
    binding = binding_from_dict({"kernel": "k", **bind}, path=str(cu))
    rep = check(cu, port, binding=binding, kernel=res.kernel, seeds=1)
    above = [f"{d.code} {d.message}" for d in rep.findings if d.severity != Severity.NOTE]
    assert rep.verdict == "pass" and not above, above
