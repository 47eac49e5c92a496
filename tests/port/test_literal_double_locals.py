"""A float kernel that computes through double values (a double accumulator, a device function
returning double) is refused by the literal lowering with the reason: NKI has no fp64, and the
kernel's author chose double for these values, so the port does not silently compute them in
fp32 (a kernel over double tensors is ported in fp32 with C2N2516 instead)."""

from __future__ import annotations

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.pipeline import port_file
from tests.port.acceptance import grid_binding, tensor_param

_BIND = grid_binding(
    ["ceil_div(n, 64)"],
    {"x": tensor_param(["n"], "in"), "y": tensor_param(["n"], "out"), "n": 1000},
    [{"n": 77}, {"n": 5}],
    block=64,
)

KERNELS = {
    "double-accumulator": (
        "__global__ void k(const float* x, float* y, int n) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (i >= n) return;\n"
        "  double acc = 0.0;\n"
        "  for (int j = 0; j <= i % 4; ++j) acc += (double)x[(i + j) % n];\n"
        "  y[i] = (float)acc;\n}\n",
        "acc",
    ),
    "device-function-returning-double": (
        "__device__ double half_of(float v) { double h = 0.5 * v; return h; }\n"
        "__global__ void k(const float* x, float* y, int n) {\n"
        "  for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n;"
        " i += blockDim.x * gridDim.x) {\n"
        "    float r = half_of(x[i]);\n    y[i] = r;\n  }\n}\n",
        "h",
    ),
}


@pytest.mark.parametrize("case", sorted(KERNELS))
def test_double_locals_of_a_float_kernel_are_refused_with_the_reason(case, tmp_path) -> None:
    src, local = KERNELS[case]
    cu = tmp_path / "k.cu"
    cu.write_text(src)
    binding = binding_from_dict({"kernel": "k", **_BIND}, path=str(cu))
    res = port_file(cu, binding=binding, lowering="literal")
    assert res.source is None
    why = [d.message for d in res.diagnostics if d.code == "C2N2301"]
    assert why and f"double-precision variable '{local}" in why[0], why
    assert "NKI has no fp64" in why[0] and "declare it float" in why[0], why
