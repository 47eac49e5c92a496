"""Row-major shapes whose columns stop short of a constant row stride: ``a[i * W + j]`` under
``j < cols - 1`` (``j + 1 < cols``, ``j <= cols - 2``) is a ``[rows, W]`` array, since a row
never runs past the stride (cols is at most W + 1); the samples that check the shape covers
every access keep cols there, instead of falling back to a flat extent."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

KERNEL = """
{defs}
__global__ void diff_cols(int {r}, int {c}, const float* src, float* dst)
{{
    int {j} = blockIdx.x * blockDim.x + threadIdx.x;
    int {i} = blockIdx.y * blockDim.y + threadIdx.y;
    if ({i} < {r} - 1 && {guard})
        dst[{i} * {w} + {j}] = src[{i} * {w} + {j} + 1] - src[{i} * {w} + {j}]
                               + src[({i} + 1) * {w} + {j}];
}}
void run(const float* src, float* dst)
{{
    dim3 block(32, 8);
    dim3 grid(({w} + 31) / 32, (200 + 7) / 8);
    diff_cols<<<grid, block>>>(200, {w}, src, dst);
}}
"""

SPELLINGS = {
    "macro-minus-one": dict(
        defs="#define W 141", w="W", r="rows", c="cols", i="i", j="j", guard="j < cols - 1"
    ),
    "plus-one-below": dict(
        defs="#define WIDTH 300", w="WIDTH", r="n", c="m", i="y", j="x", guard="x + 1 < m"
    ),
    "at-most-two-below": dict(defs="", w="96", r="h", c="w", i="r", j="q", guard="q <= w - 2"),
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_columns_below_the_stride_give_a_2d_shape(spelling: str) -> None:
    names = SPELLINGS[spelling]
    width = names["defs"].split()[-1] if names["defs"] else names["w"]
    tu = parse_source(KERNEL.format(**names), "d.cu")
    got, _ = infer_binding(tu, "diff_cols")
    rows = names["r"]
    params = got["params"]
    assert params["dst"]["shape"] == [f"-1+{rows}", int(width)]
    # src reads one row further down ((i + 1) * W): it has every row
    assert params["src"]["shape"] == [rows, int(width)]
