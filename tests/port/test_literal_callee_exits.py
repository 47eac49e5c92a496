"""Per-thread ``break`` and ``continue`` inside device functions that the literal lowering
inlines (:func:`cuda2nki.lift.literal.kernel._exits_as_flags_tu`): an escape-time count, a
``while (true)`` probe, a callee called twice, exits in both the kernel and its callee (each
function's flags named apart).  The ports match the SIMT interpreter bit for bit."""

from __future__ import annotations

import pytest

from tests.port.literal_acceptance import run_flat_kernel_exactly

_HEAD = "__global__ void k(const float* x, float* y, int n, int reach) {\n"

KERNELS = [
    ("escape_time_count", [64], """
__device__ int escape(float c, int limit) {
    int count = 0;
    float z = 0.0f;
    for (int i = 0; i < limit; ++i) {
        if (z * z >= 4.0f) {
            break;
        }
        z = z * z + c;
        count++;
    }
    return count;
}
""", """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) y[t] = (float)escape(x[t], reach + 9);
}"""),
    ("endless_probe_called_twice", [32, 2], """
__device__ float probe(const float* v, int start, int n) {
    int j = start;
    float s = 0.0f;
    while (true) {
        s += v[j];
        if (v[j] > 1.0f || s < -3.0f) break;
        j = (j + 1) % n;
        if (j == start) break;
    }
    return s;
}
""", """
    int t = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    if (t >= n) return;
    float a = probe(x, t, n);
    float b = probe(x, (t + reach) % n, n);
    y[t] = a - b;
}"""),
    ("exits_in_kernel_and_callee", [128], """
__device__ int skip_small(const float* v, int from, int count, int n) {
    int hits = 0;
    for (int d = 0; d < count; d++) {
        float w = v[(from + d) % n];
        if (w < -1.0f) continue;
        if (w > 1.5f) break;
        hits += 2;
    }
    return hits;
}
""", """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int total = 0;
    for (int r = 0; r < 4; r++) {
        if (x[(t + r) % n] > 1.8f) break;
        total += skip_small(x, t + r, reach + 3, n);
    }
    y[t] = (float)total;
}"""),
]  # fmt: skip


@pytest.mark.parametrize(("name", "block", "before", "body"), KERNELS, ids=[k[0] for k in KERNELS])
@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_callee_loop_exits_port_exactly(name, block, before, body, target, tmp_path) -> None:
    if target == "legacy" and "while (true)" in before:
        pytest.skip("the legacy API has no runtime loop for a trip count set by data")
    cu = tmp_path / f"{name}.cu"
    cu.write_text(before + _HEAD + body)
    run, points = run_flat_kernel_exactly(cu, block, target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
