"""A grid rounded from a float ratio, ``(int)((float)n / b + 0.5)``, is restated in the
binding's C integer arithmetic as ``(2n + b) / (2b)`` -- the ratio rounded halves up -- so
the grid follows the sizes ``check`` chooses and a port computes exactly the host's count.
Other float arithmetic under an integer cast has no integer expression: the grid gets no
symbolic value (never a float grid a port would truncate differently from the host)."""

from __future__ import annotations

import math

import pytest

from cuda2nki.binding import eval_c_expr
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

KERNEL = """
__global__ void halve(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * 0.5f;
}
"""

#: host lines computing ``blocks`` from ``n`` and ``threads``
ROUNDED = {
    "both-cast-double-half": "int blocks = (int)(((float)n / (float)threads) + 0.5);",
    "one-cast-float-half": "int blocks = (int)(n / (float)threads + 0.5f);",
    "half-first": "int blocks = (int)(0.5 + (float)n / threads);",
    "unsigned-cast": "unsigned blocks = (unsigned int)((float)n / (float)threads + .5);",
}


def _host(lines: str, n: int) -> str:
    return f"""
void run(float* out, const float* in, int n) {{
    int threads = 176;
    {lines}
    halve<<<blocks, threads>>>(out, in, n);
}}
int main() {{ run(0, 0, {n}); return 0; }}"""


@pytest.mark.parametrize("spelling", sorted(ROUNDED))
def test_a_rounded_ratio_grid_is_integer_arithmetic(spelling: str) -> None:
    partial, _ = infer_binding(
        parse_source(KERNEL + _host(ROUNDED[spelling], 1000), "halve.cu"), "halve"
    )
    (grid,) = partial["launch"]["grid"]
    assert "float" not in str(grid) and "." not in str(grid)
    for n in (1, 87, 88, 1000, 1100, 4095):  # halves up at 88 / 176, down below
        assert eval_c_expr(grid, {"n": n}) == math.floor(n / 176 + 0.5)


def test_other_float_arithmetic_under_a_cast_gives_no_float_grid() -> None:
    partial, _ = infer_binding(
        parse_source(KERNEL + _host("int blocks = (int)((float)n * 0.01f);", 1000), "halve.cu"),
        "halve",
    )
    for g in partial.get("launch", {}).get("grid", []):
        assert "." not in str(g) and "float" not in str(g)
        assert isinstance(eval_c_expr(g, {"n": 1000}), int)
