"""Rounding a count up by a remainder test (``n / d + (n % d != 0)``) means a count of
``d``-sized pieces only for ``d > 0``.  Where the host's values make ``d`` negative (a
command-line default larger than the tile it is subtracted from), no grid is made from it:
the grid is a run-time value (chosen over the guard with a note, or an item to complete),
never a grid of 0 blocks with extents below zero."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

KERNEL = """#define TILE 256
__global__ void sweep(int steps, const int* src, int* dst, int cols, int border) {
    int x = (TILE - steps * 2) * blockIdx.x - border + threadIdx.x;
    if (threadIdx.x >= steps && threadIdx.x < TILE - steps) dst[x] = src[x < 0 ? 0 : x];
}
int run(const int* src, int* dst, int cols, int height, int blocks, int border) {
    dim3 grid(blocks);
    sweep<<<grid, TILE>>>(height, src, dst, cols, border);
    return 0;
}
"""

#: ``blocks`` from ``inner``, negative at the host's values (height = 300)
ROUNDINGS = {
    "remainder-ternary": "int blocks = cols / inner + ((cols % inner == 0) ? 0 : 1);",
    "remainder-not-equal": "int blocks = cols / inner + (cols % inner != 0);",
    "remainder-if-statement": "int blocks = cols / inner;\n    if (cols % inner) blocks++;",
}


@pytest.mark.parametrize("spelling", sorted(ROUNDINGS))
def test_a_negative_divisor_makes_no_grid(spelling: str) -> None:
    host = f"""
int main() {{
    int cols = 1000, height = 300;
    int border = height;
    int inner = TILE - height * 2;
    {ROUNDINGS[spelling]}
    int *a, *b;
    run(a, b, cols, height, blocks, border);
    return 0;
}}"""
    partial, diags = infer_binding(parse_source(KERNEL + host, "sweep.cu"), "sweep")
    # the grid has no value from the host: either an item to complete, or a grid chosen
    # over the kernel's guard and said so -- never 0 or fewer blocks
    if "launch" in partial:
        assert all(g > 0 for g in partial["launch"]["grid"])
        assert any(d.code == "C2N2100" and "run-time value" in d.message for d in diags)
    else:
        assert any(d.code == "C2N2101" and "launch" in d.message for d in diags)
    for spec in partial["params"].values():
        if isinstance(spec, dict) and "shape" in spec:
            assert not any(str(d).lstrip().startswith("-") for d in spec["shape"])
