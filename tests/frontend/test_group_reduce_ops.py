"""``cg::reduce(tile, v, op)`` with a device function of the program's own (see
cuda2nki.frontend.groupreduce): every thread of the tile gets the whole tile's reduction."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import parse_file
from cuda2nki.simt import run_kernel

HEAD = """#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
"""

SCALAR = {
    "max-fn": ("__device__ float pick(float a, float b) { return a > b ? a : b; }", "pick"),
    "ns-fn": (
        "namespace ops { __device__ __forceinline__ float hi(const float a, const float b) {\n"
        "    return fmaxf(a, b); } }",
        "ops::hi",
    ),
    "template-sum": ("template <typename T> __device__ T add2(T a, T b) { return a + b; }", "add2"),
}


@pytest.mark.parametrize("tile", [32, 16, 8])
@pytest.mark.parametrize("spelling", sorted(SCALAR))
def test_scalar_reduce_with_a_device_function(tmp_path: Path, spelling: str, tile: int) -> None:
    fn, name = SCALAR[spelling]
    path = tmp_path / "k.cu"
    path.write_text(
        HEAD
        + fn
        + f"""
__global__ void k(const float* x, float* out) {{
    auto tile = cg::tiled_partition<{tile}>(cg::this_thread_block());
    float v = x[blockIdx.x * blockDim.x + threadIdx.x];
    float r = cg::reduce(tile, v, {name});
    out[blockIdx.x * blockDim.x + threadIdx.x] = r;
}}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    rng = np.random.default_rng(7)
    x = rng.integers(-50, 50, 128).astype(np.float32)
    got = run_kernel(
        tu, "k", grid=(2,), block=(64,), args={"x": x, "out": np.zeros(128, np.float32)}
    )["out"]
    groups = x.reshape(-1, tile)
    red = groups.sum(1) if "sum" in spelling else groups.max(1)
    np.testing.assert_array_equal(got, np.repeat(red, tile))


def test_record_reduce_online_softmax_style(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        HEAD
        + """struct __align__(8) MaxSum { float m; float s; };
__device__ MaxSum merge(MaxSum a, MaxSum b) {
    MaxSum r;
    r.m = fmaxf(a.m, b.m);
    r.s = a.s * expf(a.m - r.m) + b.s * expf(b.m - r.m);
    return r;
}
__global__ void k(const float* x, float* out, int C) {
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(cg::this_thread_block());
    MaxSum part = {-INFINITY, 0.0f};
    for (int i = warp.thread_rank(); i < C; i += warp.size())
        part = merge(part, MaxSum{x[blockIdx.x * C + i], 1.0f});
    MaxSum all;
    all = cg::reduce(warp, part, merge);
    if (warp.thread_rank() == 0) { out[2 * blockIdx.x] = all.m; out[2 * blockIdx.x + 1] = all.s; }
}
"""
    )
    tu = parse_file(path)
    assert tu.rejected == {}, tu.diagnostics
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3, 70)).astype(np.float32)
    got = run_kernel(
        tu, "k", grid=(3,), block=(32,), args={"x": x, "out": np.zeros(6, np.float32), "C": 70}
    )["out"].reshape(3, 2)
    m = x.max(1)
    np.testing.assert_allclose(got[:, 0], m)
    np.testing.assert_allclose(got[:, 1], np.exp(x - m[:, None]).sum(1), rtol=1e-5)


def test_a_functor_object_is_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "k.cu"
    path.write_text(
        HEAD
        + """struct Pick { __device__ float operator()(float a, float b) const { return a; } };
__global__ void k(const float* x, float* out) {
    auto tile = cg::tiled_partition<32>(cg::this_thread_block());
    out[0] = cg::reduce(tile, x[threadIdx.x], Pick());
}
"""
    )
    tu = parse_file(path)
    d = tu.rejected["k"][0]
    assert d.code == "C2N1029" and d.loc.line == 7
