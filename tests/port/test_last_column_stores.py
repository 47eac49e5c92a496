"""A store to the last columns spelled as a flat offset that splits with a negative column
(``e[r * C + C - 1]`` is row ``r + 1``, column ``-1`` taken term by term) borrows one row: it
stores at row ``r``, column ``C - 1``, and the port runs and matches on both targets (it indexed
column -1 of the next row, past the tensor's last row, before)."""

from __future__ import annotations

import pytest

from tests.port.acceptance import port_variant

_HEAD = "__global__ void k(float* e, const float* f, int step, int R, int C) {\n"
CASES = {
    "minus_one": "    int r = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (r < R) e[r * C + C - 1] = 2.0f * f[step] + 1.0f;\n",
    "next_row_minus_one": "    int row = threadIdx.x + blockIdx.x * blockDim.x;\n"
    "    if (row >= R) return;\n"
    "    e[(row + 1) * C - 1] = f[step] - e[(row + 1) * C - 1];\n",
    "minus_two_grid_stride": "    for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < R;"
    " r += blockDim.x * gridDim.x)\n"
    "        e[r * C + C - 2] = e[r * C + C - 2] * f[step];\n",
}


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_last_column_stores_port_and_match(name, target, tmp_path) -> None:
    bind = {
        "launch": {"grid": [3], "block": [128]},
        "params": {
            "e": {"shape": ["R", "C"], "dtype": "float32", "role": "inout"},
            "f": {"shape": [4], "dtype": "float32", "role": "in"},
            "step": 2,
            "R": 300,
            "C": 40,
        },
        "check": {"shapes": [{"R": 129, "C": 3}, {"R": 5, "C": 2}]},
    }
    src = _HEAD + CASES[name] + "}\n"
    _, run, points = port_variant(f"lastcol/{name}", src, bind, target, tmp_path, tol=1e-5)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
