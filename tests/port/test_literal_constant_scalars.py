"""File-scope ``__constant__`` scalars with a literal initialiser are uniform values in literal
ports; ``__device__`` variables with a start value (program state a caller cannot pass) are
refused by name; those without one are tensor parameters (tests/frontend/test_device_globals.py)."""

from __future__ import annotations

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.pipeline import port_file
from tests.port.acceptance import grid_binding, run_against_simt, tensor_param

_BIND = grid_binding(
    ["ceil_div(n, 32)"],
    {"x": tensor_param(["n"], "in"), "y": tensor_param(["n"], "out"), "n": 1000},
    [{"n": 77}, {"n": 5}],
    block=32,
)


def _src(globals_: str, body: str) -> str:
    return (
        f"{globals_}\n__global__ void k(const float* x, float* y, int n) {{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    if (i < n) y[i] = {body};\n"
        "}\n"
    )


def _port(tmp_path, name: str, src: str, target: str = "nki"):
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    binding = binding_from_dict({"kernel": "k", **_BIND}, path=str(cu))
    return port_file(cu, binding=binding, target=target, lowering="literal"), binding


SCALARS = [
    ("float_gain", "__constant__ float gain = 1.5f;", "x[i] * gain"),
    ("negative_int_offset", "__constant__ int lag = -3;", "x[(i - lag) % n] + (float)lag"),
    ("unsigned_mask_on_index", "__constant__ unsigned int lanes = 0xFu;", "x[i & lanes]"),
    (
        "several_in_one_declaration",
        "__constant__ float lo = -0.25f, hi = 0.75f;",
        "fminf(fmaxf(x[i], lo), hi)",
    ),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "decl", "body"), SCALARS, ids=[s[0] for s in SCALARS])
def test_constant_scalars_port_exactly(name, decl, body, target, tmp_path) -> None:
    res, binding = _port(tmp_path, name, _src(decl, body), target)
    assert res.source is not None and res.literal, [d.message for d in res.diagnostics]
    port = tmp_path / f"{name}_{target}.py"
    port.write_text(res.source)
    run = run_against_simt(res, binding, port, points=binding.test_points(), rtol=0, atol=0)
    assert len(run.points) >= 2 and not run.mismatches, run.mismatches


REFUSED = [
    (
        "device_counter",
        "__device__ int hits = 0;",
        "x[i] + (float)hits",
        "__device__ variable 'hits'",
    ),
]


@pytest.mark.parametrize(("name", "decl", "body", "why"), REFUSED, ids=[r[0] for r in REFUSED])
def test_device_globals_are_refused_by_name(name, decl, body, why, tmp_path) -> None:
    res, _ = _port(tmp_path, name, _src(decl, body))
    assert res.source is None
    assert any(why in d.message for d in res.diagnostics), [d.message for d in res.diagnostics]
