"""Device functions generic over a cooperative group (``thread_group`` parameters, ``typename G``
parameters deduced from a group argument) are instantiated per group and run as that group."""

from __future__ import annotations

import numpy as np
import pytest
from simt_helpers import run, tu_of

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import find

# a shared-memory tree over the group's lanes, called with the block and with tiles
TREE = """
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ int group_total(cg::thread_group grp, int* scratch, int v) {
    int lane = grp.thread_rank();
    for (int half = grp.size() / 2; half > 0; half /= 2) {
        scratch[lane] = v;
        grp.sync();
        if (lane < half) v += scratch[lane + half];
        grp.sync();
    }
    return v;
}
__global__ void k(const int* x, int* whole, int* parts) {
    __shared__ int work[TPB];
    cg::thread_block blk = cg::this_thread_block();
    int t = blk.thread_rank();
    int s = group_total(blk, work, x[blockIdx.x * TPB + t]);
    if (t == 0) whole[blockIdx.x] = s;
    blk.sync();
    PART_DECL
    int base = t - t % SUB;
    int p = group_total(part, work + base, x[blockIdx.x * TPB + t]);
    if (part.thread_rank() == 0) parts[(blockIdx.x * TPB + t) / SUB] = p;
}
"""

PARTS = {
    "typed": "cg::thread_block_tile<SUB> part = cg::tiled_partition<SUB>(blk);",
    "generic": "cg::thread_group part = cg::tiled_partition(blk, SUB);",
    "auto": "auto part = cg::tiled_partition<SUB>(blk);",
    "auto_alias": "auto warp = cg::tiled_partition(blk, 32);\n"
    "    auto sub = cg::tiled_partition(warp, SUB);\n    auto part = sub;",
}


@pytest.mark.parametrize("spelling", sorted(PARTS))
@pytest.mark.parametrize(("tpb", "sub"), [(64, 16), (32, 8), (128, 32)])
def test_thread_group_function_runs_as_block_and_as_tile(spelling: str, tpb: int, sub: int) -> None:
    src = (
        TREE.replace("PART_DECL", PARTS[spelling]).replace("TPB", str(tpb)).replace("SUB", str(sub))
    )
    x = np.random.default_rng(tpb + sub).integers(-50, 50, 3 * tpb).astype(np.int32)
    out = run(
        src,
        grid=(3,),
        block=(tpb,),
        x=x,
        whole=np.zeros(3, np.int32),
        parts=np.zeros(3 * tpb // sub, np.int32),
    )
    np.testing.assert_array_equal(out["whole"], x.reshape(3, tpb).sum(1))
    np.testing.assert_array_equal(out["parts"], x.reshape(-1, sub).sum(1))


def test_one_instance_per_group() -> None:
    src = TREE.replace("PART_DECL", PARTS["typed"]).replace("TPB", "64").replace("SUB", "16")
    tu = tu_of(src)
    targets = sorted({c.target for c in find(tu.kernels[0], A.Call) if c.func == "group_total"})
    assert targets == ["group_total<block>", "group_total<tile16>"]
    for name in targets:
        f = tu.function(name)
        assert [p.name for p in f.params] == ["scratch", "v"]  # the group is erased
        assert f.template_args == ()
    syncs = {n: {c.func for c in find(tu.function(n), A.Call)} for n in targets}
    assert "__syncthreads" in syncs["group_total<block>"]
    assert "__syncwarp" in syncs["group_total<tile16>"]
    assert not [d for d in tu.diagnostics if d.severity.name == "ERROR"]


# a shuffle reduction templated on the group's type, the group first or last, by value or by
# reference, deduced alongside a value type
WARP = """
#include <cooperative_groups.h>
using namespace cooperative_groups;
SUM_FN
__global__ void k(const float* x, float* out, int n) {
    thread_block block = this_thread_block();
    thread_block_tile<W> tile = tiled_partition<W>(block);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? x[i] : 0.0f;
    v = CALL;
    if (tile.thread_rank() == 0) out[i / W] = v;
}
"""

SUMS = {
    "group_first": (
        "template <typename group_t> __device__ float tsum(group_t g, float v) {\n"
        "    for (int o = g.size() / 2; o > 0; o >>= 1) v += g.shfl_down(v, o);\n"
        "    return v;\n}",
        "tsum(tile, v)",
    ),
    "group_last_ref": (
        "template <typename T, typename Group> __device__ T tsum(T v, Group& g) {\n"
        "    for (int o = 1; o < g.num_threads(); o *= 2) v += g.shfl_xor(v, o);\n"
        "    return v;\n}",
        "tsum(v, tile)",
    ),
    "const_ref": (
        "template <class G> __device__ float tsum(const G& g, float v) {\n"
        "    float r = v;\n"
        "    for (int o = g.size() >> 1; o >= 1; o = o >> 1) r = r + g.shfl_down(r, o);\n"
        "    return r;\n}",
        "tsum(tile, v)",
    ),
}


@pytest.mark.parametrize("spelling", sorted(SUMS))
@pytest.mark.parametrize("w", [32, 8])
def test_group_typed_template_is_deduced_from_the_group(spelling: str, w: int) -> None:
    fn, call = SUMS[spelling]
    src = WARP.replace("SUM_FN", fn).replace("CALL", call).replace("W", str(w))
    n = 200
    x = np.random.default_rng(w).standard_normal(256).astype(np.float32)
    out = run(src, grid=(2,), block=(128,), x=x, out=np.zeros(256 // w, np.float32), n=n)["out"]
    xm = np.where(np.arange(256) < n, x, 0).astype(np.float64)
    np.testing.assert_allclose(out, xm.reshape(-1, w).sum(1), rtol=1e-5, atol=1e-5)
