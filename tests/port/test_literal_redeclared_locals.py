"""Locals that reuse a name in the literal lowering: each declaration is classified on its own
(:mod:`cuda2nki.lift.literal.rename`), so a uniform counter that reuses the name of a per-thread
one still indexes a local array at trace time; the ports match the SIMT interpreter."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.lift.literal.rename import redeclares, unshadow
from tests.port.test_literal import _kernel, _matches

_PARAMS = (
    'out = { shape = ["n"], dtype = "float32", role = "out" }\n'
    'src = { shape = ["n"], dtype = "float32", role = "in" }\n'
    "n = 700"
)

KERNELS = {
    # a grid-stride loop's `i`, then a uniform `i` folding a register array
    "loop_counters_share_a_name": """
#define PARTS 4
__global__ void fold(float* out, const float* src, unsigned int n) {
    unsigned int gid = blockIdx.x * blockDim.x + threadIdx.x;
    float part[PARTS] = {0.f};
    for (int i = gid; i < n; i += blockDim.x * gridDim.x * PARTS)
        for (int s = 0; s < PARTS; s++)
            part[s] += (i + s * blockDim.x * gridDim.x < n) ? src[i + s * blockDim.x * gridDim.x] : 0.f;
    for (int i = 1; i < PARTS; i++)
        part[0] += part[i];
    if (gid < n) out[gid] = part[0];
}
""",
    # sibling blocks: a per-thread `k`, then a uniform `k` indexing a 2-D local array
    "sibling_blocks_reuse_a_name": """
__global__ void fold(float* out, const float* src, int n) {
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    float acc[2][3];
    {
        int k = t % 5;
        for (int r = 0; r < 2; ++r)
            for (int c = 0; c < 3; ++c)
                acc[r][c] = (float)(k + r * c);
    }
    float s = 0.0f;
    {
        for (int k = 0; k < 3; k++) s += acc[1][k] - acc[0][k];
    }
    if (t < n) out[t] = s + src[t];
}
""",
    # an inner scope's `v` (uniform) hides an outer per-thread `v`, which is read again after
    "inner_scope_hides_an_outer_local": """
__global__ void fold(float* out, const float* src, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n) return;
    float v = src[idx];
    float w[3] = {1.0f, 2.0f, 3.0f};
    for (int j = 0; j < 2; j++) {
        int v = j;
        v += 1;
        w[v] += w[v - 1];
    }
    out[idx] = v * w[2];
}
""",
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_redeclared_names_port(tmp_path, name):
    cu = _kernel(tmp_path, KERNELS[name], "fold", '"ceil_div(n, 256)"', "64", _PARAMS,
                 ["n = 1", "n = 300"])  # fmt: skip
    _matches(cu, tmp_path)


def test_unshadow_renames_each_reuse_and_its_references_only():
    from cuda2nki.frontend import parse_source

    src = """
__global__ void k(float* y, int n) {
    int i = threadIdx.x;
    for (int i = 0; i < 3; i++) y[i] = 1.0f;
    { int n = 2; y[n] = (float)i; }
    y[i] = (float)n;
}
"""
    tu = parse_source(src, "k.cu")
    fn = tu.kernels[0]
    assert redeclares(fn)
    out = unshadow(fn)
    assert not redeclares(out)
    decls = [s.name for s in out.body.body if isinstance(s, A.VarDecl)]
    assert decls == ["i"]
    loop = out.body.body[1]
    assert isinstance(loop, A.For) and loop.init[0].name == "i_2"
    assert loop.cond.left.name == "i_2"
    inner = out.body.body[2]
    assert inner.body[0].name == "n_2"
    assert inner.body[1].expr.target.index.name == "n_2"
    assert inner.body[1].expr.value.operand.name == "i"  # the outer i
    last = out.body.body[3].expr
    assert last.target.index.name == "i" and last.value.operand.name == "n"
