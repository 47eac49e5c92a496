"""A block per row whose threads seed their running value from their own first element
(``t < W ? x[t] : x[0]``), continue with a block-stride loop from ``t + blockDim.x`` and
meet in a shared tree lifts to one reduction over the whole row: the seed and the loop are two
adjacent column ranges of one fold.  The port then loads each row tile in one DMA and reduces it
with one instruction, instead of a loop over block-wide column chunks.  Each spelling (op, block
size, dtype, loop form) is checked against the SIMT interpreter in both APIs, at row widths
below, at and above the block size."""

from __future__ import annotations

import pytest

from cuda2nki.ir.nodes import Compute, Loop
from cuda2nki.passes._analysis import outermost, reductions
from tests.port.acceptance import port_variant

CASES = {
    # max, 64 threads, a thread past the row repeats the row's first element
    "max_first_element": (
        """
__global__ void k(const float* A, float* Y, int R, int W) {
    __shared__ float part[64];
    int r = blockIdx.x, lane = threadIdx.x;
    if (r >= R) return;
    float best = A[r * W + (lane < W ? lane : 0)];
    for (int c = lane + blockDim.x; c < W; c += blockDim.x) best = fmaxf(best, A[r * W + c]);
    part[lane] = best;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h >>= 1) {
        if (lane < h) part[lane] = fmaxf(part[lane], part[lane + h]);
        __syncthreads();
    }
    if (lane == 0) Y[r] = part[0];
}
""",
        64,
    ),
    # int max, 128 threads, a while loop over a row pointer
    "int_max_while": (
        """
__global__ void k(const int* A, int* Y, int R, int W) {
    __shared__ int acc[128];
    int t = threadIdx.x;
    const int* row = A + blockIdx.x * W;
    int s = t < W ? row[t] : row[0];
    int x = t + blockDim.x;
    while (x < W) { s = max(s, row[x]); x += blockDim.x; }
    acc[t] = s;
    __syncthreads();
    for (int half = 64; half >= 1; half /= 2) {
        if (t < half) acc[t] = max(acc[t], acc[t + half]);
        __syncthreads();
    }
    if (t == 0) Y[blockIdx.x] = acc[0];
}
""",
        128,
    ),
    # min, 256 threads, a constant stride, the stand-in read through the row pointer
    "min_row_pointer": (
        """
__global__ void k(const float* A, float* Y, int R, int W) {
    __shared__ float buf[256];
    const float* row = A + blockIdx.x * W;
    unsigned int i = threadIdx.x;
    float v = row[i < W ? i : 0];
    for (unsigned int c = i + 256; c < W; c += 256) v = fminf(row[c], v);
    buf[i] = v;
    __syncthreads();
    for (unsigned int s = 128; s > 0; s >>= 1) {
        if (i < s) buf[i] = fminf(buf[i + s], buf[i]);
        __syncthreads();
    }
    if (i == 0) Y[blockIdx.x] = buf[0];
}
""",
        256,
    ),
}

_PARAMS = {
    "A": {"shape": ["R", "W"], "dtype": "float32", "role": "in"},
    "Y": {"shape": ["R"], "dtype": "float32", "role": "out"},
    "R": 40,
    "W": 300,
}


def _bind(name: str, block: int) -> dict:
    shapes = [{"R": 130, "W": block}, {"R": 7, "W": block - 5}, {"R": 3, "W": 2 * block + 3}]
    dtype = "int32" if name.startswith("int") else "float32"
    params = {**_PARAMS, **{t: {**_PARAMS[t], "dtype": dtype} for t in ("A", "Y")}}
    return {
        "params": params,
        "launch": {"grid": ["R"], "block": [block]},
        "check": {"shapes": shapes},
    }


def _loops(stmts) -> list:
    out = []
    for s in stmts:
        if isinstance(s, Loop):
            out += [s.var, *_loops(s.body)]
    return out


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_seeded_block_stride_row_is_one_fold_over_the_row(name, target, tmp_path) -> None:
    src, block = CASES[name]
    res, run, points = port_variant(
        f"seeded/{name}", src, _bind(name, block), target, tmp_path, 1e-4
    )
    assert len(points) >= 4 and not run.mismatches, run.mismatches
    (c,) = [s for s in res.ir_intent.body if isinstance(s, Compute)]
    (r,) = outermost(reductions(c.expr))
    assert len(r.axes) == 1 and r.where is None and c.expr == r, c.expr
    # no loop over block-wide column chunks: only the row-tile loop is left
    assert len(_loops(res.ir_tiles.body)) == 1, _loops(res.ir_tiles.body)
