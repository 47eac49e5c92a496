"""grid.sync(): the interpreter runs a cooperative kernel's whole grid in lockstep."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki.diagnostics import DiagnosticError
from cuda2nki.frontend import parse_source
from cuda2nki.simt import run_kernel_full

NORMALISE = """\
#include <cooperative_groups.h>
{ns}
{helper}
__global__ void normalise(float* x, float* partial, int n) {{
    {decl}
    __shared__ float s[64];
    float v = 0.0f;
    for (int i = {rank}; i < n; i += {size}) v += x[i];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) {{
        if (threadIdx.x < st) s[threadIdx.x] += s[threadIdx.x + st];
        __syncthreads();
    }}
    if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
    {sync}
    float total = 0.0f;
    for (int b = 0; b < gridDim.x; ++b) total += partial[b];
    {scale}
}}
"""
SPELLINGS = [
    dict(
        ns="namespace cg = cooperative_groups;",
        helper="",
        decl="cg::grid_group grid = cg::this_grid();",
        rank="grid.thread_rank()",
        size="grid.size()",
        sync="grid.sync();",
        scale="for (int i = grid.thread_rank(); i < n; i += grid.size()) x[i] /= total;",
    ),
    dict(
        ns="namespace cg = cooperative_groups;",
        helper="""__device__ void scale(float* x, float t, int n, const cg::grid_group& g) {
    for (unsigned i = g.thread_rank(); i < n; i += g.num_threads()) x[i] = x[i] / t;
}""",
        decl="auto g = cg::this_grid();",
        rank="blockIdx.x * blockDim.x + threadIdx.x",
        size="gridDim.x * blockDim.x",
        sync="cg::sync(g);",
        scale="scale(x, total, n, g);",
    ),
    dict(
        ns="using namespace cooperative_groups;",
        helper="",
        decl="",
        rank="this_grid().thread_rank()",
        size="this_grid().size()",
        sync="this_grid().sync();",
        scale="int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    while (i < n) { x[i] /= total; i += gridDim.x * blockDim.x; }",
    ),
]


def _run(src: str, kernel: str, grid, block, chunk_threads, **args):
    tu = parse_source(src, "k.cu")
    assert not tu.rejected, {k: [d.message for d in v] for k, v in tu.rejected.items()}
    return run_kernel_full(
        tu, kernel, grid=grid, block=block, args=args, chunk_threads=chunk_threads
    )


@pytest.mark.parametrize("spelling", range(len(SPELLINGS)))
def test_grid_sync_orders_the_phases_of_all_blocks(spelling):
    src = NORMALISE.format(**SPELLINGS[spelling])
    n = 1000
    x = np.random.default_rng(spelling).random(n).astype(np.float32)
    # one block per chunk unless the grid barrier forces the whole grid into one chunk
    r = _run(src, "normalise", (6,), (64,), 64, x=x.copy(), partial=np.zeros(6, np.float32), n=n)
    assert r.chunks == 1 and r.diagnostics == []
    np.testing.assert_allclose(r.outputs["x"], x / x.sum(dtype=np.float64), rtol=1e-5)


def test_kernels_without_a_grid_barrier_still_run_in_chunks():
    src = NORMALISE.format(**{**SPELLINGS[0], "sync": ""})
    x = np.ones(512, np.float32)
    r = _run(src, "normalise", (4,), (64,), 64, x=x, partial=np.zeros(4, np.float32), n=512)
    assert r.chunks == 4


def test_grid_sync_reached_by_part_of_the_grid_is_reported():
    src = """\
namespace cg = cooperative_groups;
__global__ void k(int* out) {
    cg::grid_group grid = cg::this_grid();
    out[grid.thread_rank()] = 1;
    if (blockIdx.x > 0) grid.sync();
}
"""
    r = _run(src, "k", (2,), (32,), None, out=np.zeros(64, np.int32))
    assert [(d.code, d.loc.line) for d in r.diagnostics] == [("C2N1521", 5)]
    assert "32 of 64" in r.diagnostics[0].message


def test_grid_too_large_for_one_chunk_is_refused():
    src = """\
namespace cg = cooperative_groups;
__global__ void k(int* out) { cg::this_grid().sync(); out[0] = 1; }
"""
    with pytest.raises(DiagnosticError) as exc:
        _run(src, "k", (1 << 13,), (1024,), None, out=np.zeros(1, np.int32))
    assert exc.value.diagnostic.code == "C2N1507"
    assert "resident" in exc.value.diagnostic.message
