"""A row tile's per-row result (one value per partition) leaves as one row: Vector-engine
transposes of up to 32 partitions turn the ``[rows, 1]`` tile into ``[1, rows]``, stored by one
DMA of consecutive elements instead of 4 bytes per partition.  The transposes move data, so
integer results (an argmax, a count) come out bit-exact.  Checked against the SIMT interpreter
at ragged row counts in both APIs."""

from __future__ import annotations

import pytest

from cuda2nki.ir.nodes import Const, Loop, Store
from tests.port.acceptance import port_variant

_BIND = {
    "params": {
        "X": {"shape": ["R", "C"], "dtype": "float32", "role": "in"},
        "R": 300,
        "C": 40,
    },
    "launch": {"grid": ["ceil_div(R, 128)"], "block": [128]},
    "check": {"shapes": [{"R": 129, "C": 7}, {"R": 31, "C": 65}]},
}

CASES = {
    "row_sum": (
        """
__global__ void k(const float* X, float* Y, int R, int C) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < R) {
        float s = 0.0f;
        for (int c = 0; c < C; ++c) s += X[r * C + c];
        Y[r] = s;
    }
}
""",
        {"Y": {"shape": ["R"], "dtype": "float32", "role": "out"}},
    ),
    "argmax_first": (
        """
__global__ void k(const float* X, int* Y, int R, int C) {
    int row = threadIdx.x + blockIdx.x * blockDim.x;
    if (row >= R) return;
    int best = 0;
    float m = -3.0e38f;
    for (int c = 0; c < C; c++) {
        float v = X[row * C + c];
        if (v > m) { m = v; best = c; }
    }
    Y[row] = best;
}
""",
        {"Y": {"shape": ["R"], "dtype": "int32", "role": "out"}},
    ),
    "int_row_max": (
        """
__global__ void k(const int* W, int* Y, int R, int C) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < R; i += blockDim.x * gridDim.x) {
        int m = W[i * C];
        for (int j = 1; j < C; j++) m = max(m, W[i * C + j]);
        Y[i] = m;
    }
}
""",
        {
            "W": {"shape": ["R", "C"], "dtype": "int32", "role": "in"},
            "Y": {"shape": ["R"], "dtype": "int32", "role": "out"},
        },
    ),
}


def _stored_rows(res, tensor: str) -> list:
    """The partition counts of the tiles stored into ``tensor``."""
    out = []

    def walk(stmts) -> None:
        for s in stmts:
            if isinstance(s, Loop):
                walk(s.body)
            elif isinstance(s, Store) and s.dst.tensor == tensor:
                out.append(s.src.dims[0].size if s.src.dims else None)

    walk(res.ir_tiles.body)
    return out


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_per_row_results_are_stored_as_one_row(name, target, tmp_path) -> None:
    src, out = CASES[name]
    bind = {**_BIND, "params": {**_BIND["params"], **out}}
    if "W" in out:  # an integer matrix in place of X
        bind["params"].pop("X")
    res, run, points = port_variant(f"rowstore/{name}", src, bind, target, tmp_path, 1e-5)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    rows = _stored_rows(res, "Y")
    assert rows and all(r == Const(1) for r in rows), rows
