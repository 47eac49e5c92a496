"""Coalesced and labeled groups on the SIMT interpreter (cuda2nki.frontend.coalesced)."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source
from cuda2nki.frontend.visit import find
from cuda2nki.simt import run_kernel_full

# warp-aggregated append: the active lanes of a warp reserve their slots with one atomic
FILTER = """\
#include <cooperative_groups.h>
{ns}
__device__ int append(int* count) {{
    {decl}
    int base;
    if ({rank} == 0) base = atomicAdd(count, {size});
    base = {g}.shfl(base, 0);
    return base + {rank};
}}
__global__ void filter(const int* in, int* out, int* count, int* ranks, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] > 0) {{
        int slot = append(count);
        out[slot] = in[i];
    }}
}}
"""
FILTERS = [
    dict(
        ns="namespace cg = cooperative_groups;",
        decl="cg::coalesced_group active = cg::coalesced_threads();",
        g="active",
        rank="active.thread_rank()",
        size="active.size()",
    ),
    dict(
        ns="using namespace cooperative_groups;",
        decl="auto g = coalesced_threads();",
        g="g",
        rank="g.thread_rank()",
        size="g.num_threads()",
    ),
]


@pytest.mark.parametrize("spelling", range(len(FILTERS)))
def test_warp_aggregated_append(spelling):
    tu = parse_source(FILTER.format(**FILTERS[spelling]), "k.cu")
    assert not tu.rejected, tu.rejected
    rng = np.random.default_rng(spelling)
    x = rng.integers(-5, 5, 300).astype(np.int32)
    out, count = np.zeros(300, np.int32), np.zeros(1, np.int32)
    args = {"in": x, "out": out, "count": count, "ranks": x * 0, "n": 300}
    r = run_kernel_full(tu, "filter", grid=(3,), block=(128,), args=args)
    kept = int((x > 0).sum())
    assert r.outputs["count"][0] == kept
    np.testing.assert_array_equal(np.sort(r.outputs["out"][:kept]), np.sort(x[x > 0]))


LABELED = """\
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void bucket_max(const int* v, const int* bucket, int* best, int* size, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    cg::coalesced_group active = cg::coalesced_threads();
    {part}
    int m = cg::reduce(g, v[i], cg::greater<int>());
    if (g.thread_rank() == 0) atomicMax(&best[bucket[i]], m);
    size[i] = g.size();
}
"""
PARTS = [
    "auto g = cg::labeled_partition(active, bucket[i]);",
    "cg::coalesced_group g = cg::labeled_partition(active, bucket[i]);",
    "auto g = cg::binary_partition(active, bucket[i] & 1);",
]


@pytest.mark.parametrize("part", PARTS)
def test_labeled_partition_reduce(part):
    tu = parse_source(LABELED.replace("{part}", part), "k.cu")
    assert not tu.rejected, tu.rejected
    assert [d.name for d in find(tu.kernels[0], A.VarDecl) if d.name.startswith("__c2n_group_")]
    n = 200
    rng = np.random.default_rng(3)
    v = rng.integers(-1000, 1000, n).astype(np.int32)
    bucket = rng.integers(0, 4, n).astype(np.int32)
    if "binary" in part:
        bucket &= 1
    args = dict(v=v, bucket=bucket, best=np.full(4, -(2**31), np.int32), size=v * 0, n=n)
    r = run_kernel_full(tu, "bucket_max", grid=(2,), block=(128,), args=args)
    for b in range(int(bucket.max()) + 1):
        assert r.outputs["best"][b] == v[bucket == b].max()
    # each lane's group: the lanes of its warp with its label
    warp = np.arange(n) // 32
    want = [int(((warp == warp[i]) & (bucket == bucket[i])).sum()) for i in range(n)]
    np.testing.assert_array_equal(r.outputs["size"], want)


MULTI_WARP = """\
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
template <int BLOCK, int TILE>
__global__ void tile_sums(const float* x, float* out) {
    __shared__ cg::block_tile_memory<BLOCK> scratch;
    cg::thread_block cta = cg::this_thread_block(scratch);
    auto tile = cg::tiled_partition<TILE>(cta);
    float v = x[blockIdx.x * BLOCK + threadIdx.x];
    float s = cg::reduce(tile, v, cg::plus<float>());
    tile.sync();
    if (tile.thread_rank() == 0)
        out[blockIdx.x * tile.meta_group_size() + tile.meta_group_rank()] = s;
}
void launch(const float* x, float* out) { tile_sums<256, {tile}><<<3, 256>>>(x, out); }
"""


@pytest.mark.parametrize("tile", [64, 128, 256])
def test_multi_warp_tile_reduce(tile):
    tu = parse_source(MULTI_WARP.replace("{tile}", str(tile)), "k.cu")
    assert not tu.rejected, tu.rejected
    x = np.random.default_rng(tile).random(768).astype(np.float32)
    groups = 768 // tile
    out = np.zeros(groups, np.float32)
    r = run_kernel_full(tu, tu.kernels[0].name, grid=(3,), block=(256,), args={"x": x, "out": out})
    want = x.reshape(groups, tile).astype(np.float64).sum(axis=1)
    np.testing.assert_allclose(r.outputs["out"], want, rtol=1e-5)
    assert r.diagnostics == []


def test_warp_collectives_on_a_multi_warp_tile_are_refused():
    src = MULTI_WARP.replace("{tile}", "64").replace("tile.sync();", "v = tile.shfl_down(v, 1);")
    tu = parse_source(src, "k.cu")
    (d,) = next(iter(tu.rejected.values()))
    assert d.code == "C2N1029" and "tile of 64" in d.message
