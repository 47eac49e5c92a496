"""``switch`` statements whose cases fall through or break from inside a branch, in literal ports
(:mod:`cuda2nki.lift.literal.switchloops`): fall-through chains, a ``default`` in the middle
falling into the next case, breaks under data and index conditions, switches on thread
indices, on data and inside loops.  The ports match the SIMT interpreter bit for bit."""

from __future__ import annotations

import pytest

from tests.port.literal_acceptance import run_flat_kernel_exactly

_HEAD = "__global__ void k(const float* x, float* y, int n, int reach) {\n"

KERNELS = [
    ("fall_through_and_default_in_the_middle", [64], """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    float v = 0.0f;
    switch (t % 5) {
        case 0:
            v = 1.0f;
        case 1:
            v += x[t];
            break;
        case 2:
            if (x[t] > 0.0f) break;
            v = -x[t];
            break;
        default:
            v = 7.0f;
        case 4:
            v *= 2.0f;
    }
    y[t] = v;
}"""),
    ("tile_edges_break_on_an_index_condition", [16, 4], """
    int tx = threadIdx.x, ty = threadIdx.y;
    int t = (blockIdx.x * blockDim.y + ty) * blockDim.x + tx;
    if (t >= n) return;
    float o = 0.0f;
    switch (tx & 3) {
        case 0:
            o = x[t] + 1.0f;
            break;
        case 1:
            if (ty == 3) break;
            o = x[t] - x[t / 2];
            break;
        case 2:
            if (ty >= reach) break;
            o = 2.0f * x[t];
        case 3:
            o += 0.5f;
            break;
    }
    y[t] = o > 0.0f ? o : 0.0f;
}"""),
    ("switch_on_data_inside_a_loop", [32], """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    float acc = 0.0f;
    for (int k = 0; k < reach + 2; ++k) {
        int j = (t + k) % n;
        switch ((int)(x[j] * 2.0f)) {
            default:
                acc -= 1.0f;
                break;
            case 1:
            case 2:
                acc += x[j];
            case 3:
                if (acc > 3.0f) break;
                acc *= 1.5f;
                break;
            case -1:
                acc = -acc;
        }
        acc += 0.25f;
    }
    y[t] = acc;
}"""),
]  # fmt: skip


@pytest.mark.parametrize(("name", "block", "body"), KERNELS, ids=[k[0] for k in KERNELS])
@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_switches_as_one_pass_loops_port_exactly(name, block, body, target, tmp_path) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(_HEAD + body)
    run, points = run_flat_kernel_exactly(cu, block, target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
