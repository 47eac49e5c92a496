"""Data-dependent indices ported through the recognised path: a gather along a row that a
reduction already streams (cross-entropy's ``x[i, t[i]]`` beside the row's logsumexp) is a
one-hot selection on chip (pass ``one-hot-gather``).  Each spelling lifts to intent the
evaluator matches with NumPy, and its port matches the SIMT interpreter on both targets, on
shapes that are not multiples of 128."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from tests.port.acceptance import run_against_simt

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lift"))
from variants import _b, assert_lifts_to_meaning, t  # noqa: E402

I32 = "int32"


def _xent(a, s) -> dict:
    x, lab = a["x"], a["lab"]
    m = x.max(axis=1, keepdims=True)
    lse = np.log(np.exp(x - m).sum(axis=1)) + m[:, 0]
    return {"loss": lse - x[np.arange(x.shape[0]), lab]}


def _xent_binding(block: int, rows: str, cols: str) -> dict:
    return _b(
        {"grid": [f"ceil_div({rows}, {block})"], "block": [block]},
        {
            "x": t([rows, cols], "in"),
            "lab": t([rows], "in", I32, range=[0, cols]),
            "loss": t([rows], "out"),
            rows: 130,
            cols: 77,
        },
        [{rows: 33, cols: 300}, {rows: 257, cols: 5}],
    )


#: (id, source, binding, idiom, meaning)
GATHER_VARIANTS = [
    (
        "gather/xent_early_return",
        """
__global__ void k(const float* x, const int* lab, float* loss, int R, int C) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= R) return;
    float m = x[r * C];
    for (int c = 1; c < C; c++) m = fmaxf(m, x[r * C + c]);
    float s = 0.0f;
    for (int c = 0; c < C; c++) s += expf(x[r * C + c] - m);
    loss[r] = logf(s) + m - x[r * C + lab[r]];
}""",
        _xent_binding(64, "R", "C"),
        "gather",
        _xent,
    ),
    (
        "gather/nll_picked_first",
        """
__global__ void k(const float* x, const int* lab, float* loss, int rows, int cols) {
    int i = threadIdx.x + blockDim.x * blockIdx.x;
    if (i < rows) {
        const float* xr = x + i * cols;
        float picked = xr[lab[i]];
        float mx = xr[0];
        for (int j = 1; j < cols; ++j) mx = xr[j] > mx ? xr[j] : mx;
        float z = 0.0f;
        for (int j = 0; j < cols; ++j) z += __expf(xr[j] - mx);
        loss[i] = -(picked - mx - logf(z));
    }
}""",
        _xent_binding(128, "rows", "cols"),
        "gather",
        _xent,
    ),
    (
        "gather/xent_label_local",
        """
__global__ void k(const float* x, const int* lab, float* loss, int n, int v) {
    int row = blockIdx.x * 32 + threadIdx.x;
    if (!(row < n)) return;
    int y = lab[row];
    float best = -3.0e38f;
    for (int c = 0; c < v; ++c) best = fmaxf(best, x[row * v + c]);
    float acc = 0.0f;
    for (int c = 0; c < v; ++c) acc += expf(x[row * v + c] - best);
    float target_logit = x[row * v + y];
    loss[row] = logf(acc) - (target_logit - best);
}""",
        _xent_binding(32, "n", "v"),
        "gather",
        _xent,
    ),
]


@pytest.mark.parametrize(
    ("vid", "src", "bdict", "idiom", "meaning"),
    GATHER_VARIANTS,
    ids=[v[0] for v in GATHER_VARIANTS],
)
def test_lifts_to_meaning(vid, src, bdict, idiom, meaning) -> None:
    assert_lifts_to_meaning(vid, src, bdict, idiom, meaning, seed0=11)


def _port_and_run(vid: str, src: str, bdict: dict, target: str, tmp: Path, tol: float):
    from cuda2nki.binding import binding_from_dict
    from cuda2nki.codegen.pipeline import port_file

    cu = tmp / f"{vid.split('/')[1]}.cu"
    cu.write_text(src)
    binding = binding_from_dict({"kernel": "k", **bdict}, path=str(cu))
    res = port_file(cu, binding=binding, target=target)
    assert res.source is not None and not res.literal, [d.message for d in res.diagnostics]
    port = tmp / f"{cu.stem}_{target}.py"
    port.write_text(res.source)
    points = binding.test_points()
    run = run_against_simt(
        res, binding, port, points=points, rtol=tol, atol=tol, seed=lambda k: 5 + k
    )
    return res, run, points


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    ("vid", "src", "bdict"), [v[:3] for v in GATHER_VARIANTS], ids=[v[0] for v in GATHER_VARIANTS]
)
def test_row_gather_ports_as_one_hot_selection(vid, src, bdict, target, tmp_path) -> None:
    res, run, points = _port_and_run(vid, src, bdict, target, tmp_path, tol=1e-5)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    assert "iota" in res.source and "indirect" not in res.source.lower()
