"""An element's position used as a value (``x[i] + i * 0.5f``, ``i % 2 == 0 ? 1 : -1``,
``i / 3``) in a 1-D map of any length: an iota tile in every chunk of the flat layout, its last,
shorter chunks included (their rows have no constant bound), and the quotient or remainder of a
position by a constant the exact integer ``/`` or ``%`` of that tile."""

from __future__ import annotations

import pytest

from tests.port.acceptance import assert_ports_exactly, grid_binding, map_kernel, tensor_param

_BIND = grid_binding(
    ["ceil_div(n, 128)"],
    {"x": tensor_param(["n"], "in"), "y": tensor_param(["n"], "out"), "n": 1001},
    [{"n": 70000}, {"n": 7}],
)

CASES = [
    (f"pos/{name}", map_kernel(body), _BIND)
    for name, body in (
        ("position", "x[i] + (float)i * 0.5f"),
        ("parity", "x[i] * (i % 2 == 0 ? 1.0f : -1.0f)"),
        ("quotient", "x[i] + (float)(i / 3)"),
        ("remainder_and_quotient", "(float)(i % 7) - (float)((i + 5) / 4) * x[i]"),
    )
]


def _kernel_2d(body: str) -> str:
    return (
        "__global__ void k(const int* a, const float* x, float* o, int R, int C) {\n"
        "    int i = blockIdx.y * blockDim.y + threadIdx.y;\n"
        "    int j = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    if (i < R && j < C) o[i * C + j] = {body};\n"
        "}\n"
    )


_BIND_2D = {
    "launch": {"grid": ["ceil_div(C, 32)", "ceil_div(R, 8)"], "block": [32, 8]},
    "params": {
        "a": {"shape": ["R", "C"], "dtype": "int32", "role": "in", "range": [-1000, 1000]},
        "x": {"shape": ["R", "C"], "dtype": "float32", "role": "in"},
        "o": {"shape": ["R", "C"], "dtype": "float32", "role": "out"},
        "R": 130,
        "C": 70,
    },
    "check": {"shapes": [{"R": 3, "C": 600}]},
}

# exact integer division of data or of a position on a row tile: the legacy API, whose tiles are
# allocated whole, takes narrower row chunks (its exact 32-bit helpers keep many tiles live)
CASES += [
    (f"int2d/{name}", _kernel_2d(body), _BIND_2D)
    for name, body in (
        ("data_remainder", "(float)(a[i * C + j] % 3) + x[i * C + j]"),
        ("position_remainder", "x[i * C + j] + (float)(i - j) * 0.25f + (float)(j % 3)"),
        ("data_quotient", "(float)(a[i * C + j] / 7) * x[i * C + j]"),
    )
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("vid", "src", "bind"), CASES, ids=[c[0] for c in CASES])
def test_index_arithmetic_ports_recognised_and_exact(vid, src, bind, target, tmp_path) -> None:
    assert_ports_exactly(vid, src, bind, target, tmp_path, 1e-5)
