"""Grid groups lower to builtins and one grid-barrier call (see cuda2nki.frontend.gridgroup)."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.gridgroup import GRID_SYNC
from cuda2nki.frontend.visit import find

# the same kernel in several spellings of the grid group and its barrier
SPELLINGS = [
    (
        "namespace cg = cooperative_groups;",
        "cg::grid_group grid = cg::this_grid();",
        "grid.sync();",
    ),
    ("namespace cg = cooperative_groups;", "auto grid = cg::this_grid();", "cg::sync(grid);"),
    (
        "",
        "cooperative_groups::grid_group grid = cooperative_groups::this_grid();",
        "cooperative_groups::this_grid().sync();",
    ),
    ("using namespace cooperative_groups;", "grid_group grid = this_grid();", "grid.sync();"),
]


@pytest.mark.parametrize(("ns", "decl", "sync"), SPELLINGS)
def test_grid_group_spellings(parse, ns, decl, sync):
    tu = parse(f"""\
#include <cooperative_groups.h>
{ns}
__global__ void k(float* x, float* y, int n) {{
    {decl}
    for (int i = grid.thread_rank(); i < n; i += grid.size()) x[i] += 1.0f;
    {sync}
    if (grid.thread_rank() == 0) y[0] = x[n - 1];
}}
""")
    assert tu.rejected == {}, tu.diagnostics
    k = tu.kernels[0]
    assert not [d for d in find(k, A.VarDecl) if d.name == "grid"]
    assert [c.func for c in find(k, A.Call)] == [GRID_SYNC]
    dims = {(b.name, b.dim) for b in find(k, A.Builtin)}
    assert {("blockIdx", "x"), ("gridDim", "y"), ("blockDim", "z"), ("threadIdx", "x")} <= dims


def test_grid_methods_and_grid_parameters(parse):
    tu = parse("""\
namespace cg = cooperative_groups;
__device__ void copy(const float* a, float* b, int n, const cg::grid_group& grid) {
    for (int i = grid.thread_rank(); i < n; i += grid.num_threads()) b[i] = a[i];
    grid.sync();
}
__global__ void k(const float* a, float* b, int* info, int n) {
    cg::grid_group g = cg::this_grid();
    copy(a, b, n, g);
    if (g.is_valid() && g.thread_rank() == 0) {
        info[0] = g.num_blocks();
        info[1] = g.block_rank();
        info[2] = g.block_index().x + g.dim_blocks().y;
    }
}
""")
    assert tu.rejected == {}, tu.diagnostics
    f = tu.function("copy")
    assert [p.name for p in f.params] == ["a", "b", "n"]  # the group parameter is erased
    assert [c.func for c in find(f, A.Call)] == [GRID_SYNC]
    k = tu.kernels[0]
    call = [c for c in find(k, A.Call) if c.func == "copy"][0]
    assert len(call.args) == 3
    assert [b for b in find(k, A.BoolLit) if b.value]


def test_unknown_grid_method_is_refused(parse):
    tu = parse(
        "namespace cg = cooperative_groups;\n__global__ void k(float* p) {\n"
        "    auto g = cg::this_grid();\n    p[0] = g.cluster_rank();\n}\n"
    )
    assert [(d.code, d.loc.line) for d in tu.rejected["k"]] == [("C2N1029", 4)]
