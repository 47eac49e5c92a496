"""A launcher nobody calls sizes its dynamic shared memory by its block-size parameter
(``<<<g, dim3(tx), tx * sizeof(long)>>>``): the parameter takes the default the block takes, so
the shared bytes agree with the block.  Bytes that need another parameter's value stay
unknown (a missing item)."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

KERNEL = """
__global__ void k(const float* in, float* out, int n) {
    extern __shared__ float sh[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = 0.0f;
    for (int t = 0; t < 3; ++t) {
        if (i < n) sh[threadIdx.x] = in[i] * (float)t;
        __syncthreads();
        if (i < n) v = v * v + sh[blockDim.x - 1 - threadIdx.x];
        __syncthreads();
    }
    if (i < n) out[i] = v;
}
"""

#: launcher -> (block, shared bytes)
LAUNCHERS = {
    "dim3-member-of-a-parameter": (
        """void run(int bx, int tx, const float* a, float* b, int n) {
    dim3 grid(bx, 1, 1);
    dim3 block(tx, 1, 1);
    k<<<grid, block, tx * sizeof(float)>>>(a, b, n);
}""",
        [128, 1, 1],
        512,
    ),
    "plain-threads-and-bytes-local": (
        """void run(const float* a, float* b, int n, int threads) {
    size_t bytes = threads * sizeof(float);
    k<<<(n + threads - 1) / threads, threads, bytes>>>(a, b, n);
}""",
        [128],
        512,
    ),
    "one-padded-element": (
        """void run(const float* a, float* b, int n, unsigned nt) {
    k<<<n / nt, nt, (nt + 1) * sizeof(float)>>>(a, b, n);
}""",
        [128],
        516,
    ),
    "square-block-halved": (
        """void run(const float* a, float* b, int n, int t) {
    dim3 block(t, t);
    k<<<n / (t * t), block, t * t * sizeof(float)>>>(a, b, n);
}""",
        [32, 32],
        4096,
    ),
}


@pytest.mark.parametrize("spelling", sorted(LAUNCHERS))
def test_shared_bytes_follow_the_defaulted_block(spelling: str) -> None:
    host, block, smem = LAUNCHERS[spelling]
    got, diags = infer_binding(parse_source(KERNEL + host, "s.cu"), "k")
    launch = got.get("launch") or {}
    assert launch.get("block") == block, (launch, [d.message for d in diags])
    assert launch.get("shared_bytes") == smem, (launch, [d.message for d in diags])


def test_bytes_of_another_uncalled_parameter_stay_unknown() -> None:
    host = """void run(const float* a, float* b, int n, int tx, int words) {
    k<<<n / tx, tx, words * sizeof(float)>>>(a, b, n);
}"""
    _, diags = infer_binding(parse_source(KERNEL + host, "s.cu"), "k")
    assert any("dynamic shared memory size" in d.message for d in diags), diags
