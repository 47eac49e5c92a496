"""Pointers that are only ever moved (``p += e``, ``p--``, ``p = p + e``), in loops and under
branches, in literal ports (:mod:`cuda2nki.lift.literal.ptroffsets`): each is held as the
pointer it started as plus an integer offset the moves update, so the value after a branch or
a loop is a plain integer merge.  The ports match the SIMT interpreter bit for bit."""

from __future__ import annotations

import pytest

from tests.port.literal_acceptance import run_flat_kernel_exactly

_HEAD = "__global__ void k(const float* x, float* y, int n, int reach) {\n"

KERNELS = [
    ("parameter_moved_in_a_loop_under_a_branch", [64], """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int at = t % (n - 8);
    float s = 0.0f;
    if (reach % 2 == 0) {
        for (int c = 0; c < 4; c++) {
            s += x[at] * (float)(c + 1);
            x += 2;
        }
    } else {
        x += 1;
    }
    y[t] = s + x[at];
}"""),
    ("output_moved_to_the_block_then_stepped", [32, 2], """
    int per = blockDim.x * blockDim.y;
    int local = threadIdx.y * blockDim.x + threadIdx.x;
    if (blockIdx.x * per + local >= n) return;
    y += blockIdx.x * per;
    x = x + blockIdx.x * per;
    float v = x[local];
    if (reach > 1) {
        ++x;
        --x;
        v += 1.0f;
    }
    y[local] = v * 2.0f + x[local];
}"""),
    ("local_alias_moved_in_a_while_loop", [128], """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    const float* p = x + 2;
    int left = reach + 1;
    float acc = 0.0f;
    while (left > 0) {
        acc += p[t % (n - 16)];
        p = p + 3;
        left--;
    }
    p -= 1;
    y[t] = acc - p[t % (n - 16)];
}"""),
]  # fmt: skip


@pytest.mark.parametrize(("name", "block", "body"), KERNELS, ids=[k[0] for k in KERNELS])
@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_moved_pointers_as_offsets_port_exactly(name, block, body, target, tmp_path) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(_HEAD + body)
    run, points = run_flat_kernel_exactly(cu, block, target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
