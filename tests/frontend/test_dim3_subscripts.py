"""``dim3 block(sizes[0], sizes[1])`` parses as a function declaration whose parameters are
``sizes`` with an array declarator: each stands for that item of the host array, so the block
(and a grid written the same way) takes the array's values."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference

KERNEL = """
__global__ void shift(float* out, const float* in, int n) {
    int i = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + 1.0f;
}
"""

#: spelling -> (host code, block)
CASES = {
    "two_items_of_a_size_t_array": (
        """
void run(float* o, const float* x, int n) {
    size_t local[2] = {32, 4};
    dim3 block (local[0], local[1]);
    dim3 grid ((n + 127) / 128);
    shift<<<grid, block>>>(o, x, n);
}
""",
        [32, 4],
    ),
    "one_item_of_a_const_array": (
        """
const int widths[] = {64, 256};
void run(float* o, const float* x, int n) {
    dim3 threads(widths[1]);
    shift<<<(n + 255) / 256, threads>>>(o, x, n);
}
""",
        [256],
    ),
    "an_item_by_a_named_index": (
        """
void run(float* o, const float* x, int n) {
    const int pick = 1;
    int dims[3] = {16, 8, 1};
    dim3 blk(dims[0], dims[pick], dims[2]);
    shift<<<(n + 127) / 128, blk>>>(o, x, n);
}
""",
        [16, 8, 1],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_dim3_of_array_items_takes_their_values(case: str) -> None:
    host, block = CASES[case]
    tu = parse_source(KERNEL + host + "int main() { float *o, *x; run(o, x, 1000); }", "t.cu")
    bnd, diags = binding_from_inference(tu, "shift")
    assert bnd is not None, [d.message for d in diags if d.severity.name != "NOTE"]
    assert list(bnd.block)[: len(block)] == block
