"""A block whose sizes the host reads at run time takes a default that CUDA can launch: on two
or three axes the default is halved until the block holds at most 1024 threads, and the grid
read from the same names agrees with it."""

from __future__ import annotations

import math

import pytest

from cuda2nki.binding import eval_c_expr
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

SMOOTH = """
__global__ void smooth(const float* src, float* dst, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) dst[y * w + x] = 0.5f * src[y * w + x];
}
__global__ void fill3(float* vol, int nx, int ny, int nz) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int k = blockIdx.z * blockDim.z + threadIdx.z;
    if (i < nx && j < ny && k < nz) vol[(k * ny + j) * nx + i] = 1.0f;
}
"""

#: (host, kernel, the block it must get)
HOSTS = {
    "one-member-on-two-axes": (
        """
#include <cstdio>
struct Setup { int edge; };
void go(FILE* f, const float* a, float* b, int w, int h) {
    Setup s;
    fread(&s, sizeof(s), 1, f);
    int t = s.edge;
    dim3 block(t, t);
    dim3 grid((w + t - 1) / t, (h + t - 1) / t);
    smooth<<<grid, block>>>(a, b, w, h);
}""",
        "smooth",
        [32, 32],
    ),
    "two-launcher-parameters": (
        """
void launch(const float* a, float* b, int w, int h, int bx, int by) {
    smooth<<<dim3((w + bx - 1) / bx, (h + by - 1) / by), dim3(bx, by)>>>(a, b, w, h);
}""",
        "smooth",
        [32, 32],
    ),
    "three-axes-read-from-a-file": (
        """
#include <cstdio>
int main(int argc, char** argv) {
    FILE* f = fopen(argv[1], "r");
    int side;
    fscanf(f, "%d", &side);
    float* v;
    dim3 threads(side, side, side);
    fill3<<<dim3(4, 4, 4), threads>>>(v, 4 * side, 4 * side, 4 * side);
}""",
        "fill3",
        [8, 8, 8],
    ),
}


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_a_defaulted_block_fits_a_launch(host: str) -> None:
    src, kernel, want = HOSTS[host]
    partial, _ = infer_binding(parse_source(SMOOTH + src, "k.cu"), kernel)
    block = partial["launch"]["block"]
    assert block == want and math.prod(block) <= 1024, partial["launch"]


def test_the_grid_follows_the_fitted_block() -> None:
    src, kernel, _ = HOSTS["two-launcher-parameters"]
    partial, _ = infer_binding(parse_source(SMOOTH + src, "k.cu"), kernel)
    grid = partial["launch"]["grid"]
    # the grid covers w x h with blocks of 32 x 32, the block it launches
    assert [eval_c_expr(str(g), {"w": 100, "h": 64}) for g in grid] == [4, 2], grid


def test_a_block_given_by_the_source_is_kept() -> None:
    host = """
void launch(const float* a, float* b, int w, int h, int bx) {
    smooth<<<dim3((w + bx - 1) / bx, h), dim3(bx, 1)>>>(a, b, w, h);
}"""
    partial, _ = infer_binding(parse_source(SMOOTH + host, "k.cu"), "smooth")
    assert partial["launch"]["block"] == [128, 1]
