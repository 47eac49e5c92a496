"""A kernel that no host code launches gets a default launch when its work does not depend on
the block's shape: one-dimensional, no shared memory, no warp exchange.  The grid covers the
guard every store shares, else it is a fixed 1024 threads; a note names the default."""

from __future__ import annotations

import pytest

from cuda2nki.binding import eval_c_expr
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference, infer_binding

#: (kernel source, expected grid, expected block)
COVERED = {
    "guarded-axpy": (
        'extern "C" __global__ void k(int n, float a, const float* x, float* y) {\n'
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) y[i] = a * x[i] + y[i];\n}\n",
        ["ceil_div(n, 128)"],
        [128],
    ),
    "early-return-and-launch-bounds": (
        "__global__ void __launch_bounds__(256) k(float* out, const float* in, int count) {\n"
        "    const unsigned t = threadIdx.x + blockDim.x * blockIdx.x;\n"
        "    if (t >= count) return;\n    out[t] = in[t] * in[t];\n}\n",
        ["ceil_div(count, 256)"],
        [256],
    ),
    "grid-stride": (
        "__global__ void k(float* out, int sz) {\n"
        "    for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < sz;"
        " i += blockDim.x * gridDim.x)\n"
        "        out[i] = 2.0f * i;\n}\n",
        [8],
        [128],
    ),
    "unguarded": (
        "__global__ void k(float* out, const short* in) {\n"
        "    int idx = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    out[idx] = (float)in[idx];\n}\n",
        [8],
        [128],
    ),
}


@pytest.mark.parametrize("name", sorted(COVERED))
def test_an_unlaunched_kernel_takes_a_covering_default_launch(name: str) -> None:
    src, grid, block = COVERED[name]
    tu = parse_source(src, "k.cu")
    partial, diags = infer_binding(tu, "k")
    assert partial.get("launch", {}).get("grid") == grid, [d.message for d in diags]
    assert partial["launch"]["block"] == block
    assert any(d.code == "C2N2100" and "a default launch" in d.message for d in diags)
    assert not any(d.code == "C2N2101" and "launch" in d.message for d in diags)
    b, notes = binding_from_inference(tu, "k")
    assert b is not None, [d.message for d in notes]


def test_the_default_grid_covers_the_guard_at_every_size() -> None:
    src = COVERED["guarded-axpy"][0]
    b, _ = binding_from_inference(parse_source(src, "k.cu"), "k")
    for n in (1, 127, 128, 129, 1000):
        assert eval_c_expr(b.grid[0], {"n": n}) * 128 >= n


@pytest.mark.parametrize(
    "src",
    [
        # two-dimensional: the work's layout follows the block's shape
        "__global__ void k(float* o, int w, int h) {\n"
        "    int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    int y = blockIdx.y * blockDim.y + threadIdx.y;\n"
        "    if (x < w && y < h) o[y * w + x] = 1.0f;\n}\n",
        # shared memory sized for some block
        "__global__ void k(float* o, const float* x, int n) {\n"
        "    __shared__ float s[64];\n    int i = blockIdx.x * 64 + threadIdx.x;\n"
        "    s[threadIdx.x] = x[i];\n    __syncthreads();\n    o[i] = s[63 - threadIdx.x];\n}\n",
        # a warp exchange
        "__global__ void k(float* o, const float* x, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    float v = __shfl_down_sync(0xffffffff, x[i], 1);\n    if (i < n) o[i] = v;\n}\n",
        # an atomic counts every thread the launch runs
        "__global__ void k(int* data, int seed) {\n"
        "    int idx = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    atomicAdd(&data[idx], seed);\n}\n",
    ],
    ids=["two-d", "shared", "shuffle", "atomic"],
)
def test_no_default_where_the_block_shape_matters(src: str) -> None:
    partial, diags = infer_binding(parse_source(src, "k.cu"), "k")
    assert "launch" not in partial
    assert any(d.code == "C2N2101" for d in diags)
