"""Cooperative groups are erased into block/warp intrinsics (see the ast module docstring)."""

from __future__ import annotations

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import find

SRC = """\
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__device__ float tile_sum(cg::thread_block_tile<32> g, float v) {
    for (int o = g.size() / 2; o > 0; o /= 2) v += g.shfl_down(v, o);
    return v;
}
__global__ void k(const float* in, float* out) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    auto quad = cg::tiled_partition<4>(block);
    float v = in[block.thread_rank()];
    v = tile_sum(warp, v);
    float r = cg::reduce(warp, v, cg::plus<float>());
    float m = cg::reduce(quad, v, cg::less<float>());
    block.sync();
    cg::sync(block);
    warp.sync();
    float x = quad.shfl_xor(v, 1) + warp.shfl(v, 0);
    if (warp.thread_rank() == 0 && warp.any(v > 0)) out[warp.meta_group_rank()] = r + m + x;
    out[block.group_index().x] = block.size();
}
"""


def test_cooperative_groups_lowering(parse):
    tu = parse(SRC)
    assert tu.rejected == {}, tu.diagnostics
    k = tu.kernels[0]
    assert not [d for d in find(k, A.VarDecl) if d.name in ("block", "warp", "quad")]
    calls = [(c.func, len(c.args)) for c in find(k, A.Call)]
    assert ("__c2n_warp_reduce_add", 2) in calls and ("__c2n_warp_reduce_min", 2) in calls
    assert calls.count(("__syncthreads", 0)) == 2 and ("__syncwarp", 0) in calls
    shfl = {c.func: c for c in find(k, A.Call) if c.func.startswith("__shfl")}
    assert shfl["__shfl_xor_sync"].args[0].value == 0xFFFFFFFF
    assert shfl["__shfl_xor_sync"].args[3].value == 4 and shfl["__shfl_sync"].args[3].value == 32
    red = [c for c in find(k, A.Call) if c.func == "__c2n_warp_reduce_min"][0]
    assert red.args[1].value == 4 and red.ty.name == "float32"
    call = [c for c in find(k, A.Call) if c.func == "tile_sum"][0]
    assert len(call.args) == 1 and call.target == "tile_sum"  # the group argument is erased
    f = tu.function("tile_sum")
    assert [p.name for p in f.params] == ["v"]
    sh = find(f, A.Call)[0]
    assert sh.func == "__shfl_down_sync" and sh.args[3].value == 32
    assert any(isinstance(b, A.Builtin) and b.name == "blockIdx" for b in find(k, A.Builtin))


def test_multi_grid_groups_are_refused(parse):
    tu = parse(
        "namespace cg = cooperative_groups;\n__global__ void k(float* p) {\n"
        "    cg::multi_grid_group g = cg::this_multi_grid();\n    g.sync();\n}\n"
    )
    assert [(d.code, d.loc.line) for d in tu.rejected["k"]][0] == ("C2N1016", 3)


def test_meta_group_size_and_brace_operator(parse):
    tu = parse("""\
namespace cg = cooperative_groups;
__global__ void k(float* out, const float* x, int n) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    int row = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
    float s = cg::reduce(warp, x[row], cg::plus<float>{});
    if (warp.thread_rank() == 0) out[row] = s;
}
""")
    assert tu.rejected == {}, tu.diagnostics
    k = tu.kernels[0]
    assert [c.func for c in find(k, A.Call)] == ["__c2n_warp_reduce_add"]
    decl = find(k, A.VarDecl)[0]
    dims = [b.dim for b in find(decl.init, A.Builtin) if b.name == "blockDim"]
    assert {"x", "y", "z"} <= set(dims)
