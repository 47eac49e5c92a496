"""Locals that take values of a wider class than their classification, in literal ports: an
index local folded back into range through reference parameters of an inlined function (a
flag passed as ``const bool &`` selects between index values there), in a grid-stride loop, in
a 2-D block, with the flag set and clear.  The lowering runs again with that local held as a
per-thread tile
(:class:`cuda2nki.lift.literal.state.NotAffine`), and the port matches the SIMT interpreter bit
for bit."""

from __future__ import annotations

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.pipeline import port_file
from tests.port.acceptance import run_against_simt, tensor_param

_BINDING = {
    "kernel": "k",
    "launch": {"grid": ["ceil_div(n, 64)"], "block": [64]},
    "params": {
        "x": tensor_param(["n"], "in", "float32", [-3.0, 3.0]),
        "y": tensor_param(["n"], "out"),
        "n": 300,
        "wrap": 1,
        "reach": 2,
    },
    "check": {"shapes": [{"n": 77}]},
}
_HEAD = "__global__ void k(const float* x, float* y, int n, int wrap, int reach) {\n"

KERNELS = [
    # a neighbour folded back at the end through reference parameters, in a grid-stride loop
    ("fold_high_in_a_grid_stride_loop", [64], """
__device__ __forceinline__ void fold_hi(const bool &wrap, const int &n, int &j) {
    if (j >= n) j = wrap ? n - 1 : j - n;
}
""", """
    const int start = blockIdx.x * blockDim.x + threadIdx.x;
    const int step = blockDim.x * gridDim.x;
    for (int t = start; t < n; t += step) {
        const float v = x[t];
        bool ok = true;
        for (int o = 1; o <= reach; o++) {
            int up = t + o;
            fold_hi(wrap, n, up);
            ok &= v > x[up];
        }
        y[t] = ok;
    }
}"""),
    # folded at the start, the flag a comparison, arguments in another order
    ("fold_low_with_a_running_max", [64], """
__device__ void fold_lo(const bool &clip, int &j, const int &n) {
    if (j < 0) j = clip ? 0 : j + n;
}
""", """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    float best = x[t];
    for (int o = 1; o <= reach; ++o) {
        int dn = t - o;
        fold_lo(wrap > 0, dn, n);
        best = fmaxf(best, x[dn]);
    }
    y[t] = best;
}"""),
    # two locals through one call, in a 2-D block
    ("two_edges_in_a_two_dim_block", [16, 4], """
__device__ void edges(const bool &wrap, const int &n, int &r, int &c) {
    if (r >= n) r = wrap ? r - n : n - 1;
    if (c < 0) c = wrap ? c + n : 0;
}
""", """
    int t = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    if (t < n) {
        int r = t + reach, c = t - reach;
        edges(wrap, n, r, c);
        y[t] = x[r] - 2.0f * x[c];
    }
}"""),
]  # fmt: skip


@pytest.mark.parametrize(("name", "block", "pre", "body"), KERNELS, ids=[k[0] for k in KERNELS])
@pytest.mark.parametrize("wrap", [0, 1])
def test_widened_locals_port_exactly(name, block, pre, body, wrap, tmp_path) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(pre + _HEAD + body)
    spec = {**_BINDING, "launch": {"grid": ["ceil_div(n, 64)"], "block": block}}
    spec["params"] = {**_BINDING["params"], "wrap": wrap}
    binding = binding_from_dict(spec, path=str(cu))
    res = port_file(cu, binding=binding, target="nki", lowering="literal")
    assert res.source is not None and res.literal, [d.message for d in res.diagnostics]
    port = tmp_path / f"{name}.py"
    port.write_text(res.source)
    run = run_against_simt(res, binding, port, points=binding.test_points(), rtol=0, atol=0)
    assert len(run.points) >= 2 and not run.mismatches, run.mismatches
