"""The address of an element of a local array passed to a device
function that writes through it (``round_into(v, &lanes[k])``, a reference parameter bound to
``acc[k]``): the scalarisation inlines the call with the pointer aliasing that element
(:meth:`cuda2nki.lift.literal.scalarise.Scalariser.written_refs`).  The ports match the SIMT
interpreter bit for bit."""

from __future__ import annotations

import pytest

from tests.port.literal_acceptance import run_flat_kernel_exactly

_HEAD = "__global__ void k(const float* x, float* y, int n, int reach) {\n"

KERNELS = [
    ("pointer_to_an_array_element_in_a_loop", [64], """
__device__ void round_into(float in, float* out, unsigned int salt) {
    *out = in + (float)(salt % 3u) * 0.25f;
}
""", """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    float lanes[4];
    for (int j = 0; j < 4; j++) lanes[j] = x[(t + j) % n];
    for (unsigned int j = 0; j < 4; j++) round_into(lanes[j] * 2.0f, &lanes[j], t + j);
    y[t] = lanes[0] - lanes[1] + lanes[2] * lanes[3];
}"""),
    ("reference_bound_to_an_element_of_a_2d_array", [32, 2], """
__device__ void accumulate(float& acc, float v) { acc += v * v; }
""", """
    int t = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    if (t >= n) return;
    float grid[2][3];
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 3; c++) grid[r][c] = (float)r;
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 3; c++) accumulate(grid[r][c], x[(t + r * 3 + c) % n]);
    y[t] = grid[0][reach % 3] + grid[1][2];
}"""),
    ("pointer_to_an_element_chosen_by_a_uniform_index", [128], """
__device__ void halve(float* p, float by) { *p = *p * by; }
""", """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    float v[4] = {x[t], x[(t + 1) % n], x[(t + 2) % n], 1.0f};
    for (int j = 0; j < 3; j++) halve(&v[(j * reach) % 4], 0.5f + (float)j);
    y[t] = v[0] + v[1] * v[2] - v[3];
}"""),
]  # fmt: skip


@pytest.mark.parametrize(("name", "block", "before", "body"), KERNELS, ids=[k[0] for k in KERNELS])
@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_element_addresses_port_exactly(name, block, before, body, target, tmp_path) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(before + _HEAD + body)
    run, points = run_flat_kernel_exactly(cu, block, target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
