"""A value broadcast over ragged row tiles (``e[r][0] = f[step]`` for every row, the source of an
FDTD field's first column) is loaded once, before the loop over row tiles, at the first tile's
partition count (the largest), and each tile reads its first rows; ports stay correct on both
targets.  Spelled as a store to the first columns under a column test, an in-place scale of every
element, and a 2-D grid-stride loop."""

from __future__ import annotations

import pytest

from cuda2nki.ir.nodes import Load, Loop
from cuda2nki.rewrite import nodes
from tests.port.acceptance import port_variant

_FIRST_COLUMNS = """
__global__ void k(float* e, const float* f, int step, int R, int C) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < R && col < 2) e[row * C + col] = f[step];
}
"""
_SCALE_ALL = """
__global__ void k(float* e, const float* f, int step, int R, int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < R && c < C) e[r * C + c] = e[r * C + c] * f[step];
}
"""
_GRID_STRIDE = """
__global__ void k(float* e, const float* f, int step, int R, int C) {
    for (int r = blockIdx.y * blockDim.y + threadIdx.y; r < R; r += blockDim.y * gridDim.y)
        for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < C; c += blockDim.x * gridDim.x)
            e[r * C + c] = f[step] - e[r * C + c];
}
"""
_2D = {"grid": ["ceil_div(C, 16)", "ceil_div(R, 16)"], "block": [16, 16]}
CASES = {
    "first_columns": (_FIRST_COLUMNS, _2D),
    "scale_all": (_SCALE_ALL, _2D),
    "grid_stride": (_GRID_STRIDE, {"grid": [2, 2], "block": [16, 16]}),
}


def _bind(launch: dict) -> dict:
    return {
        "launch": launch,
        "params": {
            "e": {"shape": ["R", "C"], "dtype": "float32", "role": "inout"},
            "f": {"shape": [4], "dtype": "float32", "role": "in"},
            "step": 2,
            "R": 300,
            "C": 40,
        },
        "check": {"shapes": [{"R": 129, "C": 3}, {"R": 5, "C": 2}]},
    }


def _loads_in_loops(stmts: tuple, depth: int = 0) -> list[tuple[int, Load]]:
    out: list[tuple[int, Load]] = []
    for s in stmts:
        if isinstance(s, Loop):
            out += _loads_in_loops(s.body, depth + 1)
        elif isinstance(s, Load):
            out.append((depth, s))
    return out


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_broadcast_value_is_loaded_once_outside_the_row_tiles(name, target, tmp_path) -> None:
    src, launch = CASES[name]
    res, run, points = port_variant(f"hoist/{name}", src, _bind(launch), target, tmp_path)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    loads = [(d, ld) for d, ld in _loads_in_loops(res.ir_tiles.body) if ld.src.tensor == "f"]
    assert [d for d, _ in loads] == [0], loads
    assert any(isinstance(x, Loop) for x in nodes(res.ir_tiles))


_DEVIATION = """
__global__ void k(float* e, const float* f, int step, int R, int C) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < C) {
        float s = 0.0f;
        for (int r = 0; r < R; r++) s += (e[r * C + c] - f[c]) * (e[r * C + c] - f[c]);
        e[c] = s;
    }
}
"""


@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_a_loop_after_a_peeled_first_tile_is_left_alone(target, tmp_path) -> None:
    """The row tiles after the first (``range(1, ceil(R / 128))``) may not run at all: a
    per-column value broadcast over them is not widened to a first trip that need not exist
    (``min(128, R - 128)`` rows, negative for R < 128)."""
    bind = _bind({"grid": ["ceil_div(C, 64)"], "block": [64]})
    bind["params"]["f"] = {"shape": ["C"], "dtype": "float32", "role": "in"}
    bind["check"] = {"shapes": [{"R": 100, "C": 30}, {"R": 129, "C": 3}]}
    _, run, points = port_variant("hoist/deviation", _DEVIATION, bind, target, tmp_path, 1e-4)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
