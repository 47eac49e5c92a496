"""A device function writing vector or record reference outputs is inlined once per call in a
literal port: its statements appear once (not once per written lane, each copy recomputing the
whole function), the references alias the caller's locals, and the port matches the CUDA
kernel."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.port.acceptance import grid_binding, run_against_simt, tensor_param

#: name -> (source, the lines of the device function's stores)
KERNELS = {
    "float3_void": (
        "__device__ void halve(const float3& a, float3& h) {\n"  # line 1
        "    h.x = a.x * 0.5f;\n"
        "    h.y = a.y * 0.5f - a.x;\n"
        "    h.z = a.z * 0.5f + a.y;\n"
        "}\n"
        "__global__ void k(const float* x, float* y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i >= n) return;\n"
        "    float3 a = make_float3(x[i], x[n + i], x[2 * n + i]);\n"
        "    float3 h;\n"
        "    halve(a, h);\n"
        "    y[i] = h.x + h.y * h.z;\n"
        "}\n",
        (2, 3, 4),
    ),
    "struct_and_result": (
        "struct Span { float lo, hi; };\n"  # line 1
        "__device__ float widen(Span& s, float by) {\n"
        "    s.lo = s.lo - by;\n"
        "    s.hi = s.hi + by;\n"
        "    return s.hi - s.lo;\n"
        "}\n"
        "__global__ void k(const float* x, float* y, int n) {\n"
        "    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;"
        " i += blockDim.x * gridDim.x) {\n"
        "        Span s;\n"
        "        s.lo = x[i];\n"
        "        s.hi = x[n + i];\n"
        "        float w = widen(s, 0.25f);\n"
        "        y[i] = w * s.lo + s.hi;\n"
        "    }\n"
        "}\n",
        (3, 4),
    ),
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_reference_outputs_are_inlined_once(name: str, tmp_path: Path) -> None:
    from cuda2nki.binding import binding_from_dict
    from cuda2nki.pipeline import port_file

    src, lines = KERNELS[name]
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    width = 3 if name.startswith("float3") else 2
    bdict = grid_binding(
        ["ceil_div(n, 128)"],
        {"x": tensor_param([width, "n"], "in"), "y": tensor_param(["n"], "out"), "n": 300},
        [{"n": 129}, {"n": 40}],
    )
    binding = binding_from_dict({"kernel": "k", **bdict}, path=str(cu))
    res = port_file(cu, binding=binding, lowering="literal")
    assert res.source is not None and res.literal, [d.message for d in res.diagnostics]
    for line in lines:
        hits = re.findall(rf"# from {name}\.cu:{line}\b", res.source)
        assert len(hits) == 1, (line, len(hits))
    port = tmp_path / f"{name}_port.py"
    port.write_text(res.source)
    run = run_against_simt(res, binding, port, points=binding.test_points(), rtol=0, atol=0)
    assert len(run.points) == 3 and not run.mismatches, run.mismatches
