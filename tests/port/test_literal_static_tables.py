"""Read-only ``static`` locals with an initialiser (coefficient tables of a device function, a
constant degree counted with ``sizeof(table) / sizeof(table[0])``) in literal ports
(:mod:`cuda2nki.lift.literal.statics`): they hold what a plain local initialised the same way
holds, so the ports match the SIMT interpreter bit for bit.  A static that is written keeps
state across calls and stays refused."""

from __future__ import annotations

import pytest

from tests.port.literal_acceptance import port_flat_kernel_literally, run_flat_kernel_exactly

_HEAD = "__global__ void k(const float* x, float* y, int n, int reach) {\n"

KERNELS = [
    ("horner_table_in_a_device_function", [64], """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) y[t] = poly(x[t]);
}""", """
__device__ float poly(float v) {
    static const float c[] = {1.0f, 0.5f, 0.25f, 0.125f, -0.0625f};
    static const int degree = sizeof(c) / sizeof(float) - 1;
    float r = c[degree];
    for (int i = degree - 1; i >= 0; --i) r = r * v + c[i];
    return r;
}
"""),
    ("table_in_the_kernel_indexed_by_thread", [32, 2], """
    static float const w[4] = {0.1f, 0.2f, 0.3f, 0.4f};
    int t = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    if (t >= n) return;
    y[t] = x[t] * w[threadIdx.x & 3] + w[(t + reach) % 4];
}""", ""),
    ("const_static_count_and_element_count_loop", [128], """
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    const static int cols = 3;
    static const float m[2 * cols] = {1.0f, -1.0f, 2.0f, 0.5f, 0.25f, 4.0f};
    float s = 0.0f;
    for (int j = 0; j < (int)(sizeof(m) / sizeof(m[0])) / 2; ++j)
        s += m[(t % 2) * cols + j] * x[(t + j) % n];
    y[t] = s;
}""", ""),
]  # fmt: skip


@pytest.mark.parametrize(("name", "block", "body", "before"), KERNELS, ids=[k[0] for k in KERNELS])
@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_read_only_statics_port_exactly(name, block, body, before, target, tmp_path) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(before + _HEAD + body)
    run, points = run_flat_kernel_exactly(cu, block, target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches


@pytest.mark.parametrize(
    "decl",
    ["static float count = 0.0f;", "static int seen[2];", "static const float* p = x;"],
)
def test_writable_or_pointer_statics_stay_refused(decl, tmp_path) -> None:
    cu = tmp_path / "k.cu"
    cu.write_text(
        _HEAD + "    int t = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    {decl}\n    if (t < n) y[t] = x[t];\n}}\n"
    )
    res = port_flat_kernel_literally(cu)
    assert res.source is None
    msgs = [d.message for d in res.diagnostics if d.code == "C2N2301"]
    assert any("static local" in m for m in msgs), [d.render() for d in res.diagnostics]
