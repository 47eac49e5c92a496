"""wmma fragments lower to per-thread arrays and warp-collective calls (cuda2nki.frontend.wmma)."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import find
from cuda2nki.frontend.wmma import WMMA_FILL, WMMA_LOAD, WMMA_MMA, WMMA_STORE

KERNEL = """\
#include <mma.h>
{prelude}
__global__ void k(const {T}* a, const {T}* b, {acc_t}* c, int ld) {{
    {ns}fragment<{ns}matrix_a, {M}, {N}, {K}, {frag_t}, {ns}row_major> fa;
    {ns}fragment<{ns}matrix_b, {M}, {N}, {K}, {frag_t}, {ns}col_major> fb[2];
    {ns}fragment<{ns}accumulator, {M}, {N}, {K}, {acc_t}> acc;
    {ns}fill_fragment(acc, 0);
    {ns}load_matrix_sync(fa, a, ld);
    {ns}load_matrix_sync(fb[1], b + 16, ld);
    {ns}mma_sync(acc, fa, fb[1], acc);
    for (int i = 0; i < acc.num_elements; ++i) acc.x[i] *= 2;
    {ns}store_matrix_sync(c, acc, ld, {ns}mem_col_major);
}}
"""
CASES = [
    # prelude, namespace prefix, T, fragment element, accumulator, M, N, K, (a, acc) elements
    ("using namespace nvcuda;", "wmma::", "half", "half", "float", 16, 16, 16, ("float16", 8, 8)),
    ("", "nvcuda::wmma::", "half", "half", "half", 32, 8, 16, ("float16", 16, 8)),
    ("using namespace nvcuda::wmma;", "", "__nv_bfloat16", "__nv_bfloat16", "float",
     "8", "32", "16", ("bfloat16", 4, 8)),
    ("namespace wmma = nvcuda::wmma;\nconst int TM = 16;", "wmma::", "float",
     "wmma::precision::tf32", "float", "TM", "TM", 8, ("float32", 4, 8)),
    ("using namespace nvcuda;\n#define DM 8", "wmma::", "double", "double", "double", "DM", 8, 4,
     ("float64", 1, 2)),
    ("using namespace nvcuda;", "wmma::", "signed char", "signed char", "int", 16, 16, 16,
     ("int8", 8, 8)),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[3]}-m{c[5]}")
def test_fragments_and_operations(parse, case):
    prelude, ns, t, ft, acc_t, m, n, kk, (elem, ne_a, ne_acc) = case
    src = KERNEL.format(prelude=prelude, ns=ns, T=t, frag_t=ft, acc_t=acc_t, M=m, N=n, K=kk)
    tu = parse(src)
    assert tu.rejected == {}, tu.diagnostics
    k = tu.kernels[0]
    decls = {d.name: d.ty for d in find(k, A.VarDecl)}
    assert decls["fa"] == A.ArrayType(elem=A.ScalarType(name=elem), dims=(ne_a,))
    assert decls["fb"].dims[0] == 2 and len(decls["fb"].dims) == 2  # an array of fragments
    assert decls["acc"].dims == (ne_acc,)
    calls = [c for c in find(k, A.Call)]
    assert [c.func for c in calls] == [WMMA_FILL, WMMA_LOAD, WMMA_LOAD, WMMA_MMA, WMMA_STORE]
    mma = calls[3]
    shape = tuple(a.value for a in mma.args[4:7])
    assert shape == tuple(int(str(v).replace("TM", "16").replace("DM", "8")) for v in (m, n, kk))
    assert mma.args[7].value == (ft == "wmma::precision::tf32")
    assert [c.args[-1].value for c in calls if c.func in (WMMA_LOAD, WMMA_STORE)] == [0, 1, 1]
    loop = find(k, A.For)[0]
    assert isinstance(loop.cond.right, A.IntLit) and loop.cond.right.value == ne_acc


def test_tf32_conversion(parse):
    tu = parse("""\
#include <mma.h>
using namespace nvcuda;
__global__ void k(float* x) { x[threadIdx.x] = wmma::__float_to_tf32(x[threadIdx.x]); }
""")
    assert tu.rejected == {}
    assert [c.func for c in find(tu.kernels[0], A.Call)] == ["__c2n_float_to_tf32"]


@pytest.mark.parametrize(
    ("body", "what"),
    [
        ("wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a;\n"
         "    wmma::load_matrix_sync(a, p, 16, wmma::mem_row_major);\n"
         "    wmma::mma_sync(a, a, a, a);", "mismatched"),
        ("wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;\n"
         "    wmma::load_matrix_sync(c, (float*)p, 16);", "without a layout"),
        ("wmma::fragment<wmma::matrix_a, 8, 8, 3, half, wmma::row_major> a;", "shape"),
        ("wmma::fragment<wmma::matrix_c, 16, 16, 16, half> a;", "role"),
    ],
)  # fmt: skip
def test_bad_fragment_uses_are_refused(parse, body, what):
    tu = parse(
        f"#include <mma.h>\nusing namespace nvcuda;\n__global__ void k(half* p) {{\n    {body}\n}}\n"
    )
    d = tu.rejected["k"][0]
    assert d.code == "C2N1017" and what in d.message
