"""``hoist-guards``: a texture fetch (a guarded, clamped read) inside arithmetic becomes one
select at the top of the statement, so ``guards-to-domains`` bounds the read by the texture's
width: a port of a kernel whose texture is shorter than its launch reads zeros past the
texture's end, as CUDA does, instead of loading past the end of the texture."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.diagnostics import Severity
from cuda2nki.fidelity.check import check
from cuda2nki.ir.nodes import Select
from cuda2nki.pipeline import port_file

SCALED = """
texture<float, 1, cudaReadModeElementType> lut;
__global__ void twice(float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * tex1Dfetch(lut, i);
}
"""
LANES = """
texture<float4, 1, cudaReadModeElementType> quad;
__global__ void sum_lanes(float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float4 q = tex1Dfetch(quad, i);
    out[i] = q.x + q.y + q.z + q.w;
  }
}
"""
STRIDED_OBJECT = """
__global__ void offset_by(cudaTextureObject_t table, float *dst, float shift, int len) {
  for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < len; k += blockDim.x * gridDim.x)
    dst[k] = tex1Dfetch<float>(table, k) - shift;
}
"""


def _binding(kernel: str, out: str, size: str, tex: str, lanes: int, extra: dict) -> dict:
    shape = [f"{tex}_width", lanes] if lanes > 1 else [f"{tex}_width"]
    return {
        "kernel": kernel,
        "launch": {"grid": [f"ceil_div({size}, 128)"], "block": [128]},
        "params": {
            out: {"shape": [size], "dtype": "float32", "role": "out"},
            tex: {"shape": shape, "dtype": "float32", "role": "in"},
            size: 300,
            f"{tex}_width": 100,  # shorter than the launch
            **extra,
        },
    }


CASES = {
    "scaled-reference": (SCALED, _binding("twice", "out", "n", "lut", 1, {})),
    "float4-lanes": (LANES, _binding("sum_lanes", "out", "n", "quad", 4, {})),
    "object-grid-stride": (
        STRIDED_OBJECT,
        {
            **_binding("offset_by", "dst", "len", "table", 1, {"shift": 0.5}),
            "launch": {"grid": [2], "block": [128]},
        },
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_texture_shorter_than_the_launch_reads_zeros(name: str, tmp_path: Path) -> None:
    src, bind = CASES[name]
    cu = tmp_path / "k.cu"
    cu.write_text(src)
    binding = binding_from_dict(bind, path=str(cu))
    res = port_file(cu, binding=binding)
    assert res.source is not None, [d.render() for d in res.diagnostics]
    port = tmp_path / "k_port.py"
    port.write_text(res.source)
    rep = check(cu, port, binding=binding, seeds=1, extra_points=False, timeout=300)
    errors = [d.render() for d in rep.findings if d.severity == Severity.ERROR]
    assert rep.numerics_outcome == "pass" and not errors, errors


def test_the_guard_is_hoisted_to_the_top_of_the_statement(tmp_path: Path) -> None:
    from cuda2nki.ir.nodes import Compute
    from cuda2nki.passes import PassContext
    from cuda2nki.passes.hoist_guards import HoistGuardsPass

    src, bind = CASES["scaled-reference"]
    cu = tmp_path / "k.cu"
    cu.write_text(src)
    res = port_file(cu, binding=binding_from_dict(bind, path=str(cu)), emit="intent")
    kernel = res.ir_intent
    assert kernel is not None
    [stmt] = [c for c in kernel.body if isinstance(c, Compute)]
    assert not isinstance(stmt.expr, Select)  # 2 * select(...), as lifted
    [after] = [c for c in HoistGuardsPass().run(kernel, PassContext()).body]
    assert isinstance(after.expr, Select) and after.expr.cond == _guard(stmt.expr)
    # the clamp test inside the fetch is implied by the guard: no select is left below it
    assert not any(isinstance(x, Select) for x in _walk(after.expr.a))


def _guard(e: object) -> object:
    from cuda2nki.passes._analysis import walk

    return next(x for x in walk(e) if isinstance(x, Select)).cond


def _walk(e: object) -> list:
    from cuda2nki.passes._analysis import walk

    return list(walk(e))
