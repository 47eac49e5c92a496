"""Optional outputs passed a null pointer: an inlined device function's stores guarded by the
pointer's test (``if (extra != NULL)``, ``if (p)``, ``if (!p) ... else ...``) are dead for a
call that passes ``NULL``/``nullptr``/``0``, and a constant condition lowers only the branch C
runs (:mod:`cuda2nki.lift.literal.nullargs`).  The same function called with a real pointer
keeps its stores.  The ports match the SIMT interpreter bit for bit."""

from __future__ import annotations

import pytest

from tests.port.literal_acceptance import run_flat_kernel_exactly

_HEAD = "__global__ void k(const float* x, float* y, int n, int reach) {\n"

KERNELS = [
    ("null_macro_compared_first", [64], """
__device__ void put(float* out, float* extra, int i, float v) {
    out[i] = v;
    if (NULL != extra)
        extra[0] = v;
}
""", """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) put(y, NULL, t, x[t] * 2.0f);
}"""),
    ("nullptr_truth_test_and_a_real_call", [32, 2], """
__device__ float scaled(const float* v, int i, float* seen, float s) {
    float r = v[i] * s;
    if (seen) seen[i] = r;
    return r + 1.0f;
}
""", """
    int t = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    if (t >= n) return;
    float a = scaled(x, t, nullptr, 0.5f);
    float b = scaled(x, (t + reach) % n, 0, 3.0f);
    y[t] = a - b;
}"""),
    ("negated_test_with_else", [128], """
__device__ void pick(float* dst, float* alt, int i, float v) {
    if (!alt) {
        dst[i] = v;
    } else {
        alt[i] = -v;
    }
    if (alt == nullptr && v > 0.0f) dst[i] += 1.0f;
}
""", """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) pick(y, NULL, t, x[t]);
}"""),
]  # fmt: skip


@pytest.mark.parametrize(("name", "block", "before", "body"), KERNELS, ids=[k[0] for k in KERNELS])
@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_null_arguments_port_exactly(name, block, before, body, target, tmp_path) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(before + _HEAD + body)
    run, points = run_flat_kernel_exactly(cu, block, target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
