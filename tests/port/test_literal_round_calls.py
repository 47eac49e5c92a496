"""Rounding intrinsics and correctly rounded arithmetic in literal ports
(:mod:`cuda2nki.lift.literal.roundcalls`) and ``tanf``: ``rintf``/``nearbyintf`` (halves to
even), ``__float2int_rn/rd/ru/rz`` and ``__float2uint_*``, ``__saturatef``, ``__fadd_rn`` and
kin, on per-thread and uniform values against the SIMT interpreter, and on edge values against
NumPy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.nkisim.importer import load_kernel
from cuda2nki.nkisim.kernel import simulate_kernel
from cuda2nki.pipeline import port_file
from tests.port.acceptance import map_kernel, run_against_simt
from tests.port.test_literal_select_math import _PARAMS, _binding

_STRIDE = """__global__ void k(const float* x, const float* z, float* y, int n, float t) {
    for (int q = blockIdx.x * blockDim.x + threadIdx.x; q < n; q += gridDim.x * blockDim.x) {
        int r = __float2int_rn(x[q] * 2.0f);
        unsigned u = __float2uint_rd(fabsf(z[q]) * 3.0f);
        y[q] = (float)r + (float)u + (float)__float2int_ru(x[q]) - (float)__float2int_rz(-x[q]);
    }
}
"""

KERNELS = [
    ("tan_spellings", map_kernel("tanf(x[i] * 0.35f) + tan(z[i] * 0.4f) + __tanf(t)", _PARAMS),
     32),
    ("rint_halves", map_kernel("rintf(x[i] * 2.0f) + nearbyintf(z[i] * 4.0f) + rint(t * 2.0f)",
                               _PARAMS), 64),
    ("float_to_int_modes", _STRIDE, 32),
    ("saturate_and_rn_ops", map_kernel(
        "__saturatef(x[i] * 0.4f) + __fmul_rn(x[i], z[i]) - __fadd_rn(z[i], t) "
        "+ __fsub_rn(x[i], 1.0f) * __frcp_rn(z[i] + 7.0f)", _PARAMS), 128),
]  # fmt: skip


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "src", "block"), KERNELS, ids=[k[0] for k in KERNELS])
def test_round_calls_port_literally(name, src, block, target, tmp_path) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    binding = binding_from_dict({"kernel": "k", **_binding(block)}, path=str(cu))
    res = port_file(cu, binding=binding, target=target, lowering="literal")
    assert res.source is not None and res.literal, [d.message for d in res.diagnostics]
    port = tmp_path / f"{name}_{target}.py"
    port.write_text(res.source)
    run = run_against_simt(res, binding, port, points=binding.test_points(), rtol=1e-6, atol=1e-6)
    assert len(run.points) >= 2 and not run.mismatches, run.mismatches


_EDGES = np.array(
    [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, 1.0000001, 3.5, -4.5, 1e-30,
     8388607.5, -8388607.5, 8388608.0, 16777215.0, 1e30, -1e30, np.inf, -np.inf, np.nan, 2.0**22 + 0.5],
    dtype=np.float32,
)  # fmt: skip

_REFERENCE = {
    "rintf(x[i])": np.rint,
    "nearbyint(x[i])": np.rint,
    "__saturatef(x[i])": lambda x: np.where(np.isnan(x), 0.0, np.clip(x, 0.0, 1.0)),
}


@pytest.mark.parametrize("body", sorted(_REFERENCE))
def test_round_calls_on_edge_values(body: str, tmp_path: Path) -> None:
    x = _EDGES
    cu = tmp_path / "edge.cu"
    cu.write_text(map_kernel(body, _PARAMS))
    binding = binding_from_dict({"kernel": "k", **_binding()}, path=str(cu))
    res = port_file(cu, binding=binding, target="nki", lowering="literal")
    assert res.source is not None, [d.message for d in res.diagnostics]
    port = tmp_path / "edge_port.py"
    port.write_text(res.source)
    sim = simulate_kernel(load_kernel(port, "k"), {"x": x, "z": x, "t": 0.75})
    got = np.asarray(sim.outputs, np.float64).reshape(-1)
    want = np.asarray(_REFERENCE[body](x), np.float32).astype(np.float64)
    np.testing.assert_array_equal(got, want)
    if "rint" in body:  # -0 stays negative
        assert np.array_equal(np.signbit(got), np.signbit(want))
