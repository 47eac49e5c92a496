"""Per-column statistics with several sums over the rows in one statement (a column's variance
from two sums, its mean plus its RMS), or one reduction inside an expression (a column mean),
port as one column layout: the rows on partitions, each sum its own accumulator on the tensor
engine, the expression combining them evaluated per column."""

from __future__ import annotations

import pytest

from tests.port.acceptance import port_variant


def _kernel(loop: str, result: str, init: str) -> str:
    return f"""
__global__ void k(const float* X, float* Y, int R, int C) {{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    {init}
    for (int r = 0; r < R; ++r) {{ float v = X[r * C + c]; {loop} }}
    Y[c] = {result};
}}
"""


_BIND = {
    "launch": {"grid": ["ceil_div(C, 64)"], "block": [64]},
    "params": {
        "X": {"shape": ["R", "C"], "dtype": "float32", "role": "in"},
        "Y": {"shape": ["C"], "dtype": "float32", "role": "out"},
        "R": 150,
        "C": 300,
    },
    "check": {"shapes": [{"R": 1, "C": 65}, {"R": 129, "C": 7}]},
}

CASES = [
    (
        "variance_from_two_sums",
        _kernel("s += v; q += v * v;", "q / R - (s / R) * (s / R)", "float s = 0.0f, q = 0.0f;"),
    ),
    (
        "mean_plus_rms",
        _kernel(
            "acc += v; sq += v * v;", "acc / R + sqrtf(sq / R)", "float acc = 0.0f, sq = 0.0f;"
        ),
    ),
    (
        "ratio_of_sums",
        _kernel("a += 2.0f * v; b += fabsf(v);", "a / (b + 1.0f)", "float a = 0.0f, b = 0.0f;"),
    ),
]


# one reduction inside an expression that reads no other tensor: the same column layout, the
# expression evaluated on the per-column result
EPILOGUES = [
    ("mean", _kernel("s += v;", "s / (float)R", "float s = 0.0f;")),
    ("rms_inverse", _kernel("q += v * v;", "rsqrtf(q / R + 1e-5f)", "float q = 0.0f;")),
    ("scaled_sum", _kernel("s += v;", "s * 0.5f - 1.0f", "float s = 0.0f;")),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "src"), CASES + EPILOGUES, ids=[c[0] for c in CASES + EPILOGUES])
def test_column_reductions_port_as_one_column_layout(name, src, target, tmp_path) -> None:
    _, run, points = port_variant(f"colred/{name}", src, _BIND, target, tmp_path, tol=1e-4)
    assert len(points) >= 3 and not run.mismatches, run.mismatches  # and not ported literally


def test_sums_beside_a_max_still_port_correctly(tmp_path) -> None:
    src = _kernel("s += v; m = fmaxf(m, v);", "s / R - m", "float s = 0.0f, m = -1e30f;")
    for target in ("nki", "legacy"):
        _, run, _ = port_variant("colred/mean_max", src, _BIND, target, tmp_path, 1e-4, 3, True)
        assert not run.mismatches, run.mismatches


def test_a_column_max_is_right_in_both_apis(tmp_path) -> None:
    """R = 150 rows leave a partial last row tile: the legacy API (whose masked instructions
    write their result whole) ports the column max literally, the current API recognises it."""
    for result in ("m", "m * 2.0f - 1.0f"):
        src = _kernel("m = fmaxf(m, v);", result, "float m = -1e30f;")
        for target in ("nki", "legacy"):
            res, run, _ = port_variant("colred/cmax", src, _BIND, target, tmp_path, 1e-4, 3, True)
            assert not run.mismatches, (result, target, run.mismatches)
            assert res.literal == (target == "legacy"), (result, target)
