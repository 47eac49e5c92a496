"""A stencil whose taps are a rolled loop (``for o in -R..R: acc += w[o + R] * x[i + o]``, the
boundary padded with zeros or the taps past an end skipped) reads one halo tile per row tile,
loaded ahead of the tap loop: no DMA runs inside the loop, the per-tap weights come from one
``[rows, taps]`` tile, and the numbers match the CUDA kernel at every size (chunks narrower
than the halo included).  A 2-D filter ``f[a, b]`` is one ``[rows, a * b]`` tile for the
whole kernel."""

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

CONV2D = """
__global__ void k(const float* img, const float* f, float* out, int H, int W) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < H && c < W) {
        float s = 0.0f;
        for (int a = 0; a < TAPS; a++)
            for (int b = 0; b < TAPS; b++) {
                int y = r + a - TAPS / 2, x = c + b - TAPS / 2;
                if (x >= 0 && x < W && y >= 0 && y < H) s += f[a * TAPS + b] * img[y * W + x];
            }
        out[r * W + c] = s;
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


def _conv2d(taps: int) -> tuple[str, dict]:
    params = {
        "img": tensor_param(["H", "W"], "in"),
        "f": tensor_param([taps, taps], "in"),
        "out": tensor_param(["H", "W"], "out"),
        "H": 40,
        "W": 64,
    }
    shapes = [{"H": 130, "W": 33}, {"H": 3, "W": 200}, {"H": 1, "W": 2}]
    bind = grid_binding(["ceil_div(W, 16)", "ceil_div(H, 16)"], params, shapes)
    bind["launch"]["block"] = [16, 16]
    return CONV2D.replace("TAPS", str(taps)), bind


CASES = {
    "weighted_r3": _weighted(3),
    "weighted_r1": _weighted(1),
    "skipped_runtime_taps": _skipped(),
    "forward_window_5": _forward(5),
    "conv2d_3x3": _conv2d(3),
    "conv2d_5x5": _conv2d(5),
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
    # the innermost tap loop moves along the free axis: no DMA inside it (an outer one moving
    # along the partitions loads its shifted rows, one DMA per step)
    inner = [lp for lp in loops if not _tap_loops(lp.body)]
    assert all(_loads(lp.body) == 0 for lp in inner), "a DMA inside the tap loop"


def test_2d_filter_taps_load_once(tmp_path) -> None:
    src, bind = CASES["conv2d_3x3"]
    res, _, _ = port_variant("stencil/conv2d_taps", src, bind, "nki", tmp_path, tol=1e-4)
    top = [s for s in res.ir_tiles.body if isinstance(s, Load) and s.src.tensor == "f"]
    assert len(top) == 1 and _loads_of(res.ir_tiles.body, "f") == 1, res.source


def _loads_of(stmts, tensor: str) -> int:
    return sum(
        (isinstance(s, Load) and s.src.tensor == tensor)
        + (_loads_of(s.body, tensor) if isinstance(s, Loop) else 0)
        for s in stmts
    )
