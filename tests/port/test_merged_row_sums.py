"""Sums over merged rows (``dout`` bound ``[B, T, OC]``, summed per channel over its ``B * T``
rows) read blocks of the merged ``[B * T, OC]`` view: each row tile is one strided DMA of the
flat tensor (IR ``Rows``), summed on the tensor engine, instead of one ``(b, t)`` row per DMA.
Spelled as one flat loop, as two loops over ``b`` and ``t``, as a grid-stride loop over the
channels, over three merged dims, and weighted by a per-row factor bound ``[B, T]``."""

from __future__ import annotations

import pytest

from cuda2nki.ir.nodes import Const, Load, Rows
from cuda2nki.rewrite import nodes
from tests.port.acceptance import port_variant

_FLAT = """
__global__ void k(float* gb, const float* g, int B, int T, int OC) {
    int o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= OC) return;
    const float* col = g + o;
    float acc = 0.0f;
    for (int r = 0; r < B * T; r++) acc += col[r * OC];
    gb[o] += acc;
}
"""

_TWO_LOOPS = """
__global__ void k(float* gb, const float* g, int B, int T, int OC) {
    int c = threadIdx.x + blockDim.x * blockIdx.x;
    if (c < OC) {
        float s = 0.0f;
        for (int b = 0; b < B; ++b)
            for (int t = 0; t < T; ++t)
                s += g[b * T * OC + t * OC + c];
        gb[c] = s;
    }
}
"""

_GRID_STRIDE = """
__global__ void k(float* gb, const float* g, int B, int T, int OC) {
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < OC; c += gridDim.x * blockDim.x) {
        float s = 0.0f;
        for (int n = 0; n < T * B; n++) s += g[c + n * OC];
        gb[c] = gb[c] + 0.5f * s;
    }
}
"""

_WEIGHTED = """
__global__ void k(float* gb, const float* g, const float* w, int B, int T, int OC) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < OC) {
        float s = 0.0f;
        for (int b = 0; b < B; b++)
            for (int t = 0; t < T; t++) s += w[b * T + t] * g[(b * T + t) * OC + c];
        gb[c] = s;
    }
}
"""

_THREE_DIMS = """
__global__ void k(float* gb, const float* g, int N, int H, int W, int OC) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= OC) return;
    float s = 0.0f;
    for (int p = 0; p < N * H * W; p++) s += g[p * OC + c];
    gb[c] = s;
}
"""


def _bind(gb_role: str, grid: list, extra: dict | None = None) -> dict:
    params = {
        "gb": {"shape": ["OC"], "dtype": "float32", "role": gb_role},
        "g": {"shape": ["B", "T", "OC"], "dtype": "float32", "role": "in"},
        **(extra or {}),
        "B": 3,
        "T": 50,
        "OC": 300,
    }
    return {
        "launch": {"grid": grid, "block": [64]},
        "params": params,
        "check": {"shapes": [{"B": 2, "T": 70, "OC": 129}, {"B": 1, "T": 7, "OC": 65}]},
    }


_W = {"w": {"shape": ["B", "T"], "dtype": "float32", "role": "in"}}
CASES = {
    "flat_loop": (_FLAT, _bind("inout", ["ceil_div(OC, 64)"])),
    "two_loops": (_TWO_LOOPS, _bind("out", ["ceil_div(OC, 64)"])),
    "grid_stride": (_GRID_STRIDE, _bind("inout", [3])),
    "weighted": (_WEIGHTED, _bind("out", ["ceil_div(OC, 64)"], _W)),
}
_NHWC = {
    "launch": {"grid": ["ceil_div(OC, 64)"], "block": [64]},
    "params": {
        "gb": {"shape": ["OC"], "dtype": "float32", "role": "out"},
        "g": {"shape": ["N", "H", "W", "OC"], "dtype": "float32", "role": "in"},
        "N": 2,
        "H": 9,
        "W": 11,
        "OC": 140,
    },
    "check": {"shapes": [{"N": 1, "H": 3, "W": 5, "OC": 33}]},
}
CASES["three_dims"] = (_THREE_DIMS, _NHWC)


def _loads(res, tensor: str) -> list[Load]:
    return [s for s in nodes(res.ir_tiles) if isinstance(s, Load) and s.src.tensor == tensor]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_sums_over_merged_rows_load_row_blocks(name, target, tmp_path) -> None:
    src, bind = CASES[name]
    res, run, points = port_variant(f"merged/{name}", src, bind, target, tmp_path, tol=1e-4)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
    loads = _loads(res, "g")
    assert loads and all(isinstance(ld.src.dims[0], Rows) for ld in loads), loads
    # tiles of up to 128 rows of the merged view, not one (b, t) row per DMA
    assert all(ld.src.dims[0].count != Const(1) for ld in loads)
