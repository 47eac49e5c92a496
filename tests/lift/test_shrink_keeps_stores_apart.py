"""A production size halved to a simulable test size is kept where halving it further would make
threads that store to their own elements at the host's size store to the same one (the kernel
would race at the test size, and a check would compare two arbitrary orders)."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding
from cuda2nki.lift.storealias import collide

# rows of `cols + 1` elements, one 16 x 16 block per 16 rows: threads stay apart while
# cols + 1 >= 16
PADDED_ROWS = """
#define TILE 16
__global__ void nudge(float* grid_w, const float* step, int cols)
{
    int row = TILE * blockIdx.y + threadIdx.y + 1;
    int at = (cols + 1) * row + threadIdx.x + 1;
    grid_w[at] = grid_w[at] + 0.25f * step[threadIdx.x + 1];
}
struct Net { int width; };
void train(Net* net, float* w, const float* s)
{
    int cols = net->width;
    dim3 blocks(1, 64);
    dim3 threads(TILE, TILE);
    nudge<<<blocks, threads>>>(w, s, cols);
}
"""

# one block of 256 threads per row of `pitch` elements: blocks stay apart while pitch >= 256
PITCHED = """
__global__ void fill_rows(int pitch, double* dst, double v)
{
    dst[blockIdx.x * pitch + threadIdx.x] = v;
}
int main()
{
    const int pitch = 1 << 20;
    double* d;
    cudaMalloc(&d, 256 * pitch * sizeof(double));
    fill_rows<<<256, 256>>>(pitch, d, 1.5);
}
"""


@pytest.mark.parametrize(
    ("src", "kernel", "size", "floor"),
    [(PADDED_ROWS, "nudge", "cols", 15), (PITCHED, "fill_rows", "pitch", 256)],
    ids=["padded-rows", "pitched-blocks"],
)
def test_halving_stops_before_threads_collide(src: str, kernel: str, size: str, floor: int) -> None:
    partial, diags = infer_binding(parse_source(src, "k.cu"), kernel)
    value = partial["params"][size]
    assert floor <= value < 1 << 20  # shrunk, but not below where stores collide
    assert any("too large to simulate" in d.message for d in diags)


def test_only_stores_apart_at_the_hosts_size_stop_halving() -> None:
    partial, _ = infer_binding(parse_source(PITCHED, "k.cu"), "fill_rows")
    assert partial["params"]["pitch"] == 256
    # two threads per element: colliding at the host's size already, so halving goes on
    src = PITCHED.replace("+ threadIdx.x]", "+ threadIdx.x / 2]")
    partial, _ = infer_binding(parse_source(src, "k.cu"), "fill_rows")
    assert partial["params"]["pitch"] < 128


def test_collide_reads_the_executed_stores() -> None:
    from cuda2nki.lift.privatise import privatised
    from cuda2nki.lift.symexec import execute

    tu = parse_source(PADDED_ROWS, "k.cu")
    prog = execute(tu, privatised(tu.function("nudge")), (16, 16, 1))
    assert not collide(prog.stores, (16, 16, 1), {"cols": 15})
    assert collide(prog.stores, (16, 16, 1), {"cols": 14})
