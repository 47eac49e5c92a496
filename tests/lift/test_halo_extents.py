"""Stencils launched over the interior of an image read a halo around each point (``p - w``,
``p + w + 1``): the extent is the largest of those offsets, an offset one row down versus one
column right included.  Their difference is linear in the width and zero at width 1, where
sampling the sizes from 1 up left the comparison undecided and the pointer unbounded (its shape
then came from a default-sized allocation, and check's sizes did not fit the kernel's reads);
such a difference is now decided exactly."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift import affine as af
from cuda2nki.lift.extents import extents
from cuda2nki.lift.extentshape import _bigger

CROSS = """
__global__ void {name}(const float* {src}, float* {dst}, int {h}, int {w}) {{
    int {y} = blockIdx.y * blockDim.y + threadIdx.y + 1;
    int {x} = blockIdx.x * blockDim.x + threadIdx.x + 1;
    int at = {y} * {w} + {x};
    {dst}[at] = 0.25f * ({src}[at - {w}] + {src}[at + {w}] + {src}[at - 1] + {src}[at + 1]);
}}
"""

#: nine taps through a 2-D subscript, the row index the outer one
BOX = """
__global__ void {name}(const float* {src}, float* {dst}, int {h}, int {w}) {{
    int {x} = 1 + threadIdx.x + blockIdx.x * blockDim.x;
    int {y} = 1 + threadIdx.y + blockIdx.y * blockDim.y;
    float s = 0.0f;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
            s += {src}[({y} + dy) * {w} + {x} + dx];
    {dst}[{y} * {w} + {x}] = s / 9.0f;
}}
"""

#: a tile staged in shared memory with its border rows and columns, as image filters do
STAGED = """
__global__ void {name}(const unsigned char* {src}, unsigned char* {dst}, int {h}, int {w}) {{
    extern __shared__ int tile[];
    const int T = blockDim.x;
    const int ly = threadIdx.y + 1;
    const int lx = threadIdx.x + 1;
    const int {y} = blockIdx.y * blockDim.y + ly;
    const int {x} = blockIdx.x * blockDim.x + lx;
    const int p = {y} * {w} + {x};
    tile[ly * (T + 2) + lx] = {src}[p];
    if (ly == 1) {{
        tile[lx] = {src}[p - {w}];
        if (lx == T) tile[T + 1] = {src}[p - {w} + 1];
    }} else if (ly == T) {{
        tile[(T + 1) * (T + 2) + lx] = {src}[p + {w}];
        if (lx == T) tile[(T + 1) * (T + 2) + T + 1] = {src}[p + {w} + 1];
    }}
    if (lx == 1) tile[ly * (T + 2)] = {src}[p - 1];
    else if (lx == T) tile[ly * (T + 2) + T + 1] = {src}[p + 1];
    __syncthreads();
    {dst}[p] = (unsigned char)((tile[(ly - 1) * (T + 2) + lx] + tile[(ly + 1) * (T + 2) + lx]) / 2);
}}
"""

SPELLINGS = [
    # (template, kernel, src, dst, rows, cols, row index, column index, block)
    (CROSS, "blur_cross", "src", "dst", "height", "width", "y", "x", 16),
    (CROSS, "smooth", "img", "res", "nr", "nc", "r", "c", 8),
    (BOX, "box9", "in", "out", "rows", "cols", "row", "col", 16),
    (BOX, "mean3x3", "a", "b", "H", "W", "i", "j", 32),
    (STAGED, "staged_edge", "data", "out", "rows", "cols", "g_row", "g_col", 16),
    (STAGED, "tile_blur", "pix", "dst", "ny", "nx", "gy", "gx", 8),
]


@pytest.mark.parametrize("s", SPELLINGS, ids=[s[1] for s in SPELLINGS])
def test_an_interior_stencil_reads_an_image_of_the_launched_size(s) -> None:
    tmpl, name, src, dst, h, w, y, x, b = s
    text = tmpl.format(name=name, src=src, dst=dst, h=h, w=w, y=y, x=x)
    fn = parse_source(text, f"{name}.cu").function(name)
    launch = {"grid": [f"({w} - 2) / {b}", f"({h} - 2) / {b}"], "block": [b, b]}
    got = extents(fn, launch)
    assert got[src].shape == (h, w), got[src]
    assert got[dst].shape == (h, w), got[dst]


def test_a_difference_linear_in_one_size_is_decided_exactly() -> None:
    w, x = af.Poly.atom("w"), af.Poly.atom("x")
    one_down = x + w + af.Poly.const(1)  # p + w, plus one: the extent of a read one row down
    one_right = x + af.Poly.const(2)  # p + 1, plus one: one column right (equal at w = 1)
    assert _bigger(one_down, one_right) == one_down
    assert _bigger(one_right, one_down) == one_down
    # a real crossing still has no larger one, in one size or in two
    assert _bigger(w * af.Poly.const(2), w + af.Poly.const(50)) is None
    n = af.Poly.atom("n")
    assert _bigger(w * n, w * af.Poly.const(16) + n) is None
