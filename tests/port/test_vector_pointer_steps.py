"""A step of a vector pointer moves it by whole vectors: ``x + w``, ``&x[w]`` and ``p += w`` on a
``float4*`` address float ``4 * w`` (a port that stepped by one float read the wrong elements).
Each spelling, with and without a cache-hint intrinsic around the address, ports through the map
recogniser on both targets with the numbers of the CUDA kernel."""

from __future__ import annotations

import pytest

from tests.port.acceptance import assert_ports_exactly, grid_binding, tensor_param

TARGETS = ["nki", "legacy"]

_HEAD = (
    "__global__ void k(float4* z, const float4* x, int n4) {\n"
    "    int w = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (w >= n4) return;\n"
)
_TWICE = "    float4 r = make_float4(2.0f * v.x, 2.0f * v.y, 2.0f * v.z, 2.0f * v.w);\n"

SPELLINGS = {
    "deref_sum": "    float4 v = *(x + w);\n" + _TWICE + "    *(z + w) = r;\n",
    "address_of_element": "    float4 v = __ldg(&x[w]);\n" + _TWICE + "    __stcs(&z[w], r);\n",
    "stepped_pointers": "    const float4* p = x;\n    p += w;\n    float4* q = z + w;\n"
    "    float4 v = __ldcs(p);\n" + _TWICE + "    *q = r;\n",
    "sum_then_subscript": "    const float4* row = w + x;\n    float4 v = row[0];\n"
    + _TWICE
    + "    (z + w)[0] = r;\n",
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_vector_pointer_steps_port_exactly(name, target, tmp_path) -> None:
    params = {
        "z": tensor_param(["4 * n4"], "out"),
        "x": tensor_param(["4 * n4"], "in"),
        "n4": 300,
    }
    binding = grid_binding(["ceil_div(n4, 128)"], params, [{"n4": 300}, {"n4": 33}])
    src = _HEAD + SPELLINGS[name] + "}\n"
    assert_ports_exactly(f"vec4/{name}", src, binding, target, tmp_path)
