"""Zero-padded neighbour reads of a 1-D stencil (``i > 0 ? x[i - 1] : 0``) at sizes whose
ragged tiles are empty (``n`` a multiple of the tile width): the window sizes of an empty tile
are spelled where the port starts, and used to divide by its zero column count
(cuda2nki.passes._window)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.pipeline import port_file
from tests.port.acceptance import grid_binding, run_against_simt, tensor_param

BODIES = {
    "left_right": "float l = i > 0 ? x[i - 1] : 0.0f;\n"
    "        float r = i + 1 < n ? x[i + 1] : 0.0f;\n"
    "        y[i] = 0.25f * l + 0.5f * x[i] + 0.25f * r;",
    "ge_zero": "float l = (i - 1 >= 0) ? x[i - 1] : 0.0f;\n        y[i] = x[i] - l;",
    "radius_two": "float a = i >= 2 ? x[i - 2] : 0.0f;\n"
    "        float b = i + 2 < n ? x[i + 2] : 0.0f;\n"
    "        y[i] = a + x[i] + b;",
}


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(BODIES))
def test_whole_tiles_only_and_ragged_sizes_both_run(name: str, target: str, tmp_path: Path):
    cu = tmp_path / f"{name}.cu"
    cu.write_text(
        "__global__ void k(const float* x, float* y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    if (i < n) {{\n        {BODIES[name]}\n    }}\n}}\n"
    )
    params = {"x": tensor_param(["n"], "in"), "y": tensor_param(["n"], "out"), "n": 1024}
    points = [{"n": 1024}, {"n": 65536}, {"n": 1000}]
    bdict = grid_binding(["ceil_div(n, 128)"], params, points, block=128)
    binding = binding_from_dict({"kernel": "k", **bdict}, path=str(cu))
    res = port_file(cu, binding=binding, target=target)
    assert res.source is not None and not res.literal, [d.render() for d in res.diagnostics]
    port = tmp_path / f"{name}_{target}.py"
    port.write_text(res.source)
    run = run_against_simt(res, binding, port, points=points, rtol=1e-6, atol=1e-6)
    assert not run.mismatches, run.mismatches
