"""A stencil whose taps are a rolled loop (``for o in -R..R: acc += w[o + R] * x[i + o]``, the
boundary padded with zeros or the taps past an end skipped) reads one halo tile per row tile,
loaded ahead of the tap loop: no DMA runs inside the loop, the per-tap weights come from one
``[rows, taps]`` tile, and the numbers match the CUDA kernel at every size (chunks narrower
than the halo included)."""

from __future__ import annotations

import pytest

from cuda2nki.ir.nodes import Load, Loop, LoopKind
from tests.port.acceptance import grid_binding, port_variant, tensor_param

WEIGHTED = """
__global__ void k(const float* x, const float* w, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float acc = 0.0f;
    for (int o = -RADIUS; o <= RADIUS; o++) {
        acc += w[o + RADIUS] * ((i + o >= 0 && i + o < n) ? x[i + o] : 0.0f);
    }
    y[i] = acc;
}
"""

SKIPPED = """
__global__ void k(const float* sig, const float* taps, float* y, int n, int ntaps) {
    int pos = blockIdx.x * blockDim.x + threadIdx.x;
    if (pos < n) {
        float s = 0.0f;
        for (int t = 0; t < ntaps; ++t) {
            int at = pos + t - ntaps / 2;
            if (0 <= at && at < n) s += taps[t] * sig[at];
        }
        y[pos] = s;
    }
}
"""

FORWARD = """
__global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int k = 0; k < WIDTH; k++) s += (i + k < n) ? x[i + k] : 0.0f;
        y[i] = s;
    }
}
"""

SIZES = [{"n": 1000}, {"n": 130}, {"n": 7}, {"n": 2}]


def _weighted(radius: int) -> tuple[str, dict]:
    src = WEIGHTED.replace("RADIUS", str(radius))
    params = {
        "x": tensor_param(["n"], "in"),
        "w": tensor_param([2 * radius + 1], "in"),
        "y": tensor_param(["n"], "out"),
        "n": 3000,
    }
    return src, grid_binding(["ceil_div(n, 128)"], params, SIZES)


def _skipped() -> tuple[str, dict]:
    params = {
        "sig": tensor_param(["n"], "in"),
        "taps": tensor_param(["ntaps"], "in"),
        "y": tensor_param(["n"], "out"),
        "n": 3000,
        "ntaps": 5,
    }
    shapes = [{"n": 1000, "ntaps": 9}, {"n": 129, "ntaps": 4}, {"n": 3, "ntaps": 7}]
    return SKIPPED, grid_binding(["ceil_div(n, 256)"], params, shapes, block=256)


def _forward(width: int) -> tuple[str, dict]:
    params = {"x": tensor_param(["n"], "in"), "y": tensor_param(["n"], "out"), "n": 3000}
    return FORWARD.replace("WIDTH", str(width)), grid_binding(["ceil_div(n, 128)"], params, SIZES)


CASES = {
    "weighted_r3": _weighted(3),
    "weighted_r1": _weighted(1),
    "skipped_runtime_taps": _skipped(),
    "forward_window_5": _forward(5),
}


def _tap_loops(stmts) -> list[Loop]:
    out = []
    for s in stmts:
        if isinstance(s, Loop):
            if s.kind == LoopKind.SEQUENTIAL:
                out.append(s)
            out.extend(_tap_loops(s.body))
    return out


def _loads(stmts) -> int:
    return sum(
        1 if isinstance(s, Load) else _loads(s.body) if isinstance(s, Loop) else 0 for s in stmts
    )


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", CASES)
def test_tap_loop_reads_one_halo_tile(name: str, target: str, tmp_path) -> None:
    src, bind = CASES[name]
    res, run, points = port_variant(f"stencil/{name}", src, bind, target, tmp_path, tol=1e-4)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    loops = _tap_loops(res.ir_tiles.body)
    assert loops, "no rolled tap loop"
    assert all(_loads(lp.body) == 0 for lp in loops), "a DMA inside the tap loop"
