"""A kernel launched once per step of a host loop, its grid reassigned in the loop
(``dim3 grid(1, 1); for (k...) { grid.x = (N - (k + 1)) / b; kern<<<grid, b>>>(A, k); }``):
the grid follows the step, the step takes the loop's first value, and the buffer, which the
kernel indexes at an offset of the step (``A[k * N + j]``), takes its allocated extent."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

KERNEL = """
#define N {n}
__global__ void {name}(int n, float *A, int {step})
{{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (({step} < j) && (j < n)) A[{step} * N + j] = A[{step} * N + j] / A[{step} * N + {step}];
}}
"""

HOST = """
void run(int n, float* host)
{{
    float* d;
    cudaMalloc(&d, N * N * sizeof(float));
    dim3 threads({block}, 1);
    dim3 blocks(1, 1, 1);
    for (int {loop} = 0; {loop} < N; {loop}++) {{
        {assign}
        {name}<<<blocks, threads>>>(n, d, {loop});
        cudaDeviceSynchronize();
    }}
}}
int main() {{ int n = N; float* a; run(n, a); return 0; }}
"""

ASSIGNS = {
    "ceil-of-floats": "blocks.x = (unsigned int)(ceil((float)(N - ({loop} + 1)) / ((float)threads.x)));",
    "integer-ceil": "blocks.x = (N - {loop} - 1 + {block} - 1) / {block};",
}


@pytest.mark.parametrize("assign", sorted(ASSIGNS))
@pytest.mark.parametrize(
    ("name", "step", "loop", "block", "n"),
    [
        ("row_scale", "k", "k", 256, 2048),
        ("pivot_div", "piv", "p", 128, 1000),
    ],
)
def test_grid_follows_the_host_loop(
    assign: str, name: str, step: str, loop: str, block: int, n: int
) -> None:
    fill = ASSIGNS[assign].format(loop=loop, block=block)
    src = KERNEL.format(n=n, name=name, step=step) + HOST.format(
        name=name, loop=loop, block=block, assign=fill
    )
    tu = parse_source(src, "lu_like.cu")
    data, _ = infer_binding(tu, name)
    grid = data["launch"]["grid"]
    assert grid[0] not in (1, "1") and step in str(grid[0]), grid
    params = data["params"]
    assert params[step] == 0  # the loop's first value: a step, not a size
    assert params["A"]["shape"] == [n * n]
    assert params["n"] == n
