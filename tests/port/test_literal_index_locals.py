"""The literal lowering ports index arithmetic that is not affine in the thread wherever it
lands: a local first classified thread-affine that is re-assigned a remainder or quotient that
is not exact (``r = r % C`` after ``r = i % (R * C)``) is lowered again as an index local, and a
pointer moved by such a value (``x + (i / C) * C``, a row found by ``/`` and ``%``) keeps its
offset as an index array known when the kernel is traced -- never a refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.port.acceptance import grid_binding, run_against_simt, tensor_param

TARGETS = ["nki", "legacy"]

_HEAD = (
    "__global__ void k(const float* x, float* y, int n, int C, int R) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
)

#: a local re-assigned a value that is not affine in the thread
LOCALS = {
    "mod_then_mod": "    if (i < n) {\n        int r = i % (R * C);\n        r = r % C;\n"
    "        y[i] = x[i] * (float)(r + 1);\n    }\n",
    "div_then_mod_assign": "    int t = i / C;\n    t %= R;\n"
    "    if (i < n) y[i] = x[i] + (float)t;\n",
    "chain_of_quotients": "    int q = i;\n    q = q / 3;\n    q = q - (q / 5) * 5;\n"
    "    if (i >= n) return;\n    y[i] = x[i] - (float)q;\n",
}

#: a pointer moved by index arithmetic that is not affine in the thread
POINTERS = {
    "row_base_by_quotient": "    if (i < n) {\n        const float* row = x + (i / C) * C;\n"
    "        y[i] = row[i % C] * 2.0f;\n    }\n",
    "split_three_ways": "    if (i < n) {\n        int c = i % C;\n        int r = (i / C) % R;\n"
    "        int b = i / (C * R);\n        const float* at = x + b * C * R + c * R + r;\n"
    "        y[i] = *at;\n    }\n",
    "moved_back_to_row_start": "    if (i >= n) return;\n    const float* p = x + i;\n"
    "    p = p - i % C;\n    y[i] = p[0] + x[i];\n",
}


def _port_literal(name: str, body: str, target: str, tmp: Path):
    from cuda2nki.binding import binding_from_dict
    from cuda2nki.pipeline import port_file

    params = {"x": tensor_param(["n"], "in"), "y": tensor_param(["n"], "out"), "n": 120}
    params.update({"C": 5, "R": 4})
    shapes = [{"n": 120, "C": 5, "R": 4}, {"n": 168, "C": 7, "R": 3}]
    bdict = grid_binding(["ceil_div(n, 64)"], params, shapes, block=64)
    cu = tmp / f"{name}.cu"
    cu.write_text(_HEAD + body + "}\n")
    binding = binding_from_dict({"kernel": "k", **bdict}, path=str(cu))
    res = port_file(cu, binding=binding, target=target, lowering="literal")
    assert res.source is not None, [d.render() for d in res.diagnostics]
    port = tmp / f"{name}_{target}.py"
    port.write_text(res.source)
    points = binding.test_points()
    run = run_against_simt(res, binding, port, points=points, rtol=0.0, atol=0.0)
    return res, run, points


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(LOCALS))
def test_re_assigned_index_locals_port_literally(name, target, tmp_path) -> None:
    _, run, points = _port_literal(name, LOCALS[name], target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(POINTERS))
def test_pointers_moved_by_index_values_port_literally(name, target, tmp_path) -> None:
    _, run, points = _port_literal(name, POINTERS[name], target, tmp_path)
    assert len(points) >= 2 and not run.mismatches, run.mismatches
