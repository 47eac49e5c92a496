"""Index arithmetic spelled with the 24-bit multiplications ``__umul24`` / ``__mul24`` (older
kernels' ``blockIdx.x * blockDim.x``): the extents read them as products, so the pointers they
index get shapes from the guards as with ``*``."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.extents import extents

FLAT = """
__global__ void {name}(unsigned int* {out}, const float* {inp}, unsigned int {n}) {{
    unsigned int {i} = {mul}({a}, {b}) + threadIdx.x;
    if ({i} >= {n}) return;
    {out}[{i}] = {inp}[{i}] > 0.0f ? 1u : 0u;
}}
"""


@pytest.mark.parametrize(
    "name, out, inp, n, i, mul, a, b",
    [
        ("flags", "flag", "val", "n", "idx", "__umul24", "blockIdx.x", "blockDim.x"),
        ("marks", "mark", "x", "count", "gid", "__mul24", "blockDim.x", "blockIdx.x"),
        ("signs", "s", "src", "len", "k", "__umul24", "blockDim.x", "blockIdx.x"),
    ],
)
def test_a_guarded_global_index_spelled_with_mul24(
    name: str, out: str, inp: str, n: str, i: str, mul: str, a: str, b: str
) -> None:
    src = FLAT.format(name=name, out=out, inp=inp, n=n, i=i, mul=mul, a=a, b=b)
    fn = parse_source(src, f"{name}.cu").function(name)
    got = extents(fn, {"grid": [f"ceil_div({n}, 128)"], "block": [128]})
    assert got[out].shape == (n,) and got[out].role == "out"
    assert got[inp].shape == (n,) and got[inp].role == "in"


def test_a_2d_index_and_a_grid_stride_loop_spelled_with_mul24() -> None:
    src = """
__global__ void rows(float* dst, const float* img, int w, int h) {
    int x = __umul24(blockIdx.x, blockDim.x) + threadIdx.x;
    int y = __mul24(blockIdx.y, blockDim.y) + threadIdx.y;
    if (x < w && y < h) dst[__umul24(y, w) + x] = img[y * w + x] * 0.5f;
}
__global__ void strided(float* v, int n) {
    for (int i = __umul24(blockIdx.x, blockDim.x) + threadIdx.x; i < n;
         i += __umul24(blockDim.x, gridDim.x))
        v[i] = v[i] * 2.0f;
}
"""
    tu = parse_source(src, "r.cu")
    got = extents(
        tu.function("rows"), {"grid": ["ceil_div(w, 16)", "ceil_div(h, 16)"], "block": [16, 16]}
    )
    assert got["dst"].shape == ("h", "w") and got["img"].shape == ("h", "w")
    got = extents(tu.function("strided"), {"grid": ["64"], "block": [256]})
    assert got["v"].shape == ("n",) and got["v"].role == "inout"
