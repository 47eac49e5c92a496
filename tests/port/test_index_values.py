"""An element's position used as a value (``x[i] + i * 0.5f``, ``i % 2 == 0 ? 1 : -1``,
``i / 3``) in a 1-D map of any length: an iota tile in every chunk of the flat layout, its last,
shorter chunks included (their rows have no constant bound), and the quotient or remainder of a
position by a constant the exact integer ``/`` or ``%`` of that tile."""

from __future__ import annotations

import pytest

from tests.port.acceptance import port_variant


def _kernel(body: str) -> str:
    return (
        "__global__ void k(const float* x, float* y, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        f"    if (i < n) y[i] = {body};\n"
        "}\n"
    )


_BIND = {
    "launch": {"grid": ["ceil_div(n, 128)"], "block": [128]},
    "params": {
        "x": {"shape": ["n"], "dtype": "float32", "role": "in"},
        "y": {"shape": ["n"], "dtype": "float32", "role": "out"},
        "n": 1001,
    },
    "check": {"shapes": [{"n": 70000}, {"n": 7}]},
}

CASES = [
    ("position", "x[i] + (float)i * 0.5f"),
    ("parity", "x[i] * (i % 2 == 0 ? 1.0f : -1.0f)"),
    ("quotient", "x[i] + (float)(i / 3)"),
    ("remainder_and_quotient", "(float)(i % 7) - (float)((i + 5) / 4) * x[i]"),
]


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(("name", "body"), CASES, ids=[c[0] for c in CASES])
def test_positions_as_values_port_recognised(name, body, target, tmp_path) -> None:
    _, run, points = port_variant(f"pos/{name}", _kernel(body), _BIND, target, tmp_path, 1e-5)
    assert len(points) >= 3 and not run.mismatches, run.mismatches  # and not ported literally
