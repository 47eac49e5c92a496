"""Packed vector structs (llm.c's ``Packed128<T>``) lower to short vector types."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.typesys import INT, ULONG
from cuda2nki.frontend.visit import find

TEMPLATED = """
template <class T>
struct alignas(16) Packed128 {
    __device__ T& operator[](int index) { return payload[index]; }
    static constexpr const size_t size = 16 / sizeof(T);
    T payload[size];
};
template <class T>
__device__ Packed128<T> load128(const T* p) { return *reinterpret_cast<const Packed128<T>*>(p); }
"""


def _kernel(parse, src: str) -> A.Function:
    tu = parse(src)
    assert tu.rejected == {}, tu.diagnostics
    return tu.kernels[0]


@pytest.mark.parametrize(
    ("alias", "elem", "width"),
    [
        ("typedef Packed128<float> x128;", "float32", 4),
        ("using x128 = Packed128<__nv_bfloat16>;", "bfloat16", 8),
        ("typedef Packed128<double> x128;", "float64", 2),
    ],
)
def test_alias_static_size_and_lane_index(parse, alias: str, elem: str, width: int) -> None:
    k = _kernel(
        parse,
        TEMPLATED
        + alias
        + """
__global__ void k(float* out, int n) {
    x128 v;
    for (int i = 0; i < x128::size; ++i) { v[i] = 0; out[i] = (float)v.payload[i]; }
    out[0] = Packed128<float>::size + v.size;
}""",
    )
    decl = next(d for d in find(k, A.VarDecl) if d.name == "v")
    assert isinstance(decl.ty, A.VectorType)
    assert (decl.ty.base.name, decl.ty.width) == (elem, width)
    sizes = [e for e in find(k, A.IntLit) if e.ty == ULONG]
    assert sorted(s.value for s in sizes) == sorted([width, 4, width])
    lanes = [e for e in find(k, A.Index) if isinstance(e.base.ty, A.VectorType)]
    assert len(lanes) == 2 and all(e.ty.name == elem for e in lanes)


def test_plain_struct_with_int_static(parse) -> None:
    k = _kernel(
        parse,
        """
struct Quad { static constexpr int n = 4; float v[n];
    __device__ float& operator[](int j) { return this->v[j]; } };
__global__ void k(float* out) { Quad q; q[1] = 2.0f; out[0] = q[1] * Quad::n; }""",
    )
    decl = next(d for d in find(k, A.VarDecl) if d.name == "q")
    assert (decl.ty.name, decl.ty.width) == ("Quad<float32>", 4)
    assert any(e.value == 4 and e.ty == INT for e in find(k, A.IntLit))


@pytest.mark.parametrize(
    "struct",
    [
        # operator[] that does not read the array at its argument
        "struct S { float v[4]; __device__ float& operator[](int j) { return v[0]; } };",
        # two data members
        "struct S { float v[4]; int tag; };",
        # another operator
        "struct S { float v[4]; __device__ S operator+(S o) const { return o; } };",
    ],
)
def test_lookalike_structs_stay_refused(parse, struct: str) -> None:
    tu = parse(struct + "\n__global__ void k(float* out) { S s; out[0] = 0.0f; }\n")
    codes = [d.code for d in tu.rejected.get("k", [])]
    assert "C2N1025" in codes
