"""Loops whose uniform condition has side effects (``while (k >>= 1)``, ``while (--left)``,
``for (; (m /= 2) > 0;)``, ``while ((b <<= 1) < limit)``) in literal ports
(:meth:`cuda2nki.lift.literal.loops.LoopMixin.tested_in_body`): the condition runs once per
test, in C's order, including the last test that leaves the loop; the ports match the SIMT
interpreter bit for bit on both targets."""

from __future__ import annotations

import pytest

from tests.port.literal_acceptance import run_flat_kernel_exactly

_HEAD = "__global__ void k(const float* x, float* y, int n, int reach) {\n"

KERNELS = [
    ("binary_search_by_halving_a_power_of_two", [64], """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    unsigned k = 1u << 8;
    float v = x[t];
    int idx = 0;
    while (k >>= 1) {
        int r = idx | (int)k;
        if (r < n && v >= x[r]) idx = r;
    }
    y[t] = (float)idx + (float)k;
}"""),
    ("count_down_with_a_pre_decrement", [32, 2], """
    int t = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    int left = reach + 3;
    float acc = 0.0f;
    while (--left) acc += (t + left < n) ? x[t + left] : 0.5f;
    if (t < n) y[t] = acc + (float)left;
}"""),
    ("for_with_an_assigning_condition_and_a_step", [64], """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int m = 37, steps = 0;
    float s = x[t];
    for (int j = 0; (m /= 2) > 0; j += 2) { s = s * 0.5f + (float)(m + j); ++steps; }
    y[t] = s + 100.0f * (float)steps + (float)m;
}"""),
    ("doubling_until_a_limit", [64], """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int b = 1;
    float w = t < n ? x[t] : 0.0f;
    while ((b <<= 1) < 4 * reach + 5) w = w * 2.0f - (float)b;
    if (t < n) y[t] = w + (float)b;
}"""),
]  # fmt: skip


@pytest.mark.parametrize(("name", "block", "body"), KERNELS, ids=[k[0] for k in KERNELS])
@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_loops_testing_side_effects_port_exactly(name, block, body, target, tmp_path) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(_HEAD + body)
    run, points = run_flat_kernel_exactly(cu, block, target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
