"""``__restrict``, the GNU spelling of ``restrict``, after a ``const`` of a pointer declarator
(where the grammar takes ``restrict`` and ``__restrict__`` only): read as ``restrict``, every
column of the line kept."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.preprocess import preprocess
from cuda2nki.frontend.visit import find


@pytest.mark.parametrize(
    "params",
    [
        "float* const __restrict out, const float* const __restrict in, int n",
        "int n, float *const __restrict out, const float *const __restrict in",
        "float* __restrict const out, const float* __restrict in, int n",
        "float* const __restrict__ out, const float* const __restrict in, int n",
    ],
)
def test_const_gnu_restrict_parameters(parse, params):
    tu = parse(
        """\
__global__ void scale(PARAMS) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = 2.0f * in[i];
}
""".replace("PARAMS", params)
    )
    assert tu.rejected == {}, tu.diagnostics
    (k,) = tu.kernels
    assert [p.name for p in k.params if isinstance(p.ty, A.PointerType)] == ["out", "in"]


def test_const_gnu_restrict_local_and_macro_path(parse):
    tu = parse("""\
#define BS 128
__global__ void copy(int* const __restrict dst, const int* src, int n) {
    int* const __restrict d = dst + blockIdx.x * BS;
    int t = threadIdx.x;
    if (blockIdx.x * BS + t < n) d[t] = src[blockIdx.x * BS + t];
}
""")
    assert tu.rejected == {}, tu.diagnostics
    assert any(v.name == "d" for v in find(tu.kernels[0], A.VarDecl))


def test_respelling_keeps_columns_and_other_names():
    src = "void f(int* const __restrict p, int __restrict_x, int* __restrict__ q);\n"
    out = preprocess(src, "k.cu").text
    assert len(out) == len(src)
    assert "int* const restrict   p" in out
    assert "__restrict_x" in out and "__restrict__ q" in out
