"""``__constant__`` tables declared without a size (``short q[] = {...}``) take the size of
their initialiser (C's rule), in the interpreter and in literal ports alike."""

from __future__ import annotations

import pytest

from tests.port.acceptance import assert_ports_exactly, grid_binding, tensor_param

_BIND = grid_binding(
    ["ceil_div(n, 32)"],
    {"x": tensor_param(["n"], "in"), "y": tensor_param(["n"], "out"), "n": 1000},
    [{"n": 70}, {"n": 9}],
    block=32,
)

TABLES = [
    (
        "short_weights_by_lane",
        "__constant__ short wq[] = {3, -1, 4, 1, -5, 9, 2, 6};\n",
        "x[i] * (float)wq[threadIdx.x % 8]",
    ),
    (
        "flat_rows_of_a_matrix",
        "__constant__ int steps[][2] = {1, 0, 0, 1, 2, 2};\n",
        "x[(i + steps[i % 3][i % 2]) % n] - (float)steps[2][1]",
    ),
    (
        "float_taps_by_index",
        "__constant__ float taps[] = {0.25f, 0.5f, 0.25f, -1.0f, 2.0f};\n",
        "x[i] + taps[i % 5] * x[(i + 1) % n]",
    ),
    (
        "int_offsets_two_rows",
        "__constant__ int offs[][3] = {{1, 2, 3}, {4, 5, 6}};\n",
        "x[(i + offs[i % 2][i % 3]) % n]",
    ),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "table", "body"), TABLES, ids=[t[0] for t in TABLES])
def test_unsized_constant_tables_port_exactly(name, table, body, target, tmp_path) -> None:
    src = (
        f"{table}__global__ void k(const float* x, float* y, int n) {{\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) {\n"
        "        float v = " + body + ";\n"
        "        if (v > 1e30f) return;\n"  # keeps the kernel on the literal path
        "        y[i] = v;\n"
        "    }\n"
        "}\n"
    )
    assert_ports_exactly(f"table/{name}", src, _BIND, target, tmp_path, literal_ok=True)
