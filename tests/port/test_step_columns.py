"""A reduction rolled into a loop over ``k`` inside a row tile (``sum_k (p[i, k] - c[j, k])^2``
for every ``j`` of the tile's free axis, one step per CUDA iteration) reads each step's element
of the row, ``p[i, k]``, and each step's row of the other operand, ``c[j, k]``, the same on
every partition.  Both are loaded once ahead of the loop: the rows' block by one wide DMA, the
other operand's block onto one partition (once for all row tiles) and broadcast each step by
the tensor engine, not by a DMA per step.  Checked against the SIMT interpreter in both APIs."""

from __future__ import annotations

import pytest

from cuda2nki.ir.nodes import Load, Loop
from cuda2nki.ir.ops import LoopKind
from tests.port.acceptance import port_variant

_PARAMS = {
    "P": {"shape": ["N", "D"], "dtype": "float32", "role": "in"},
    "Q": {"shape": ["M", "D"], "dtype": "float32", "role": "in"},
    "N": 300,
    "M": 9,
    "D": 6,
}
_CHECK = {"shapes": [{"N": 129, "M": 17, "D": 3}, {"N": 40, "M": 130, "D": 33}]}

CASES = {
    # nearest row of Q under the L1 distance, first minimum wins; a while loop over features
    "nearest_l1": (
        """
__global__ void k(const float* P, const float* Q, int* nearest, int N, int M, int D) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) return;
    int arg = 0;
    float lo = 3.0e38f;
    for (int j = 0; j < M; ++j) {
        float d = 0.0f;
        int f = 0;
        while (f < D) { d += fabsf(P[i * D + f] - Q[j * D + f]); f++; }
        if (d < lo) { lo = d; arg = j; }
    }
    nearest[i] = arg;
}
""",
        {"nearest": {"shape": ["N"], "dtype": "int32", "role": "out"}},
        {"grid": ["ceil_div(N, 64)"], "block": [64]},
    ),
    # the smallest squared distance itself; a grid-stride loop over the rows
    "min_sq_distance": (
        """
__global__ void k(const float* P, const float* Q, float* best, int N, int M, int D) {
    for (int row = blockIdx.x * blockDim.x + threadIdx.x; row < N; row += gridDim.x * blockDim.x) {
        float m = 3.0e38f;
        for (int c = 0; c < M; c++) {
            float s = 0.0f;
            for (int x = 0; x < D; x++) { float t = Q[c * D + x] - P[row * D + x]; s += t * t; }
            m = fminf(m, s);
        }
        best[row] = m;
    }
}
""",
        {"best": {"shape": ["N"], "dtype": "float32", "role": "out"}},
        {"grid": [2], "block": [256]},
    ),
}


def _loads_in_steps(res) -> list:
    """Loads inside the sequential (step) loops of the port."""
    out = []

    def walk(stmts, inside: bool) -> None:
        for s in stmts:
            if isinstance(s, Loop):
                walk(s.body, inside or s.kind == LoopKind.SEQUENTIAL)
            elif isinstance(s, Load) and inside:
                out.append(s.src.tensor)

    walk(res.ir_tiles.body, False)
    return out


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_step_operands_load_once_ahead_of_the_steps(name, target, tmp_path) -> None:
    src, out, launch = CASES[name]
    bind = {"params": {**_PARAMS, **out}, "launch": launch, "check": _CHECK}
    res, run, points = port_variant(f"steps/{name}", src, bind, target, tmp_path, 1e-5)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    assert _loads_in_steps(res) == [], _loads_in_steps(res)
