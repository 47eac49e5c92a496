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
def test_lookalike_structs_are_not_packed(parse, struct: str) -> None:
    """Not a packed vector: an aggregate struct (its members one by one, see
    test_local_struct_arrays.py and test_methods.py), never a vector named after it."""
    tu = parse(struct + "\n__global__ void k(float* out) { S s; out[0] = 0.0f; }\n")
    assert "k" not in tu.rejected, tu.diagnostics
    decls = {d.name: d.ty for d in find(tu.kernels[0], A.VarDecl)}
    assert "s" not in decls and isinstance(decls["s__v"], A.ArrayType)


WORDS = """
#include <string.h>
template <class T>
struct alignas(16) Packed128 {
    Packed128() = default;
    __device__ explicit Packed128(int4 bits) {
        static_assert(sizeof(bits) == sizeof(payload), "size");
        memcpy(&payload, &bits, sizeof(bits));
    }
    __device__ T& operator[](int index) { return payload[index]; }
    __device__ int4 get_bits() const {
        int4 bits;
        memcpy(&bits, &payload, sizeof(bits));
        return bits;
    }
    static constexpr const size_t size = sizeof(int4) / sizeof(T);
    T payload[size];
};
typedef Packed128<float> f128;
"""


def _vector_accesses(k: A.Function) -> list[A.Cast]:
    """The reinterpret casts of a pointer to the packed vector type."""
    return [
        c
        for c in find(k, A.Cast)
        if isinstance(c.to, A.PointerType)
        and c.to.pointee.__class__ is A.VectorType
        and c.to.pointee.name.startswith("Packed128")
    ]


@pytest.mark.parametrize(
    ("load", "store"),
    [
        # llm.c's spelling: a word loaded through a reinterpret cast, stored from get_bits()
        (
            "f128{*reinterpret_cast<const int4*>(x + i)}",
            "*reinterpret_cast<int4*>(y + i) = v.get_bits();",
        ),
        # streaming (cache-hinted) loads and stores of the word
        (
            "Packed128<float>{__ldcs(reinterpret_cast<const int4*>(x + i))}",
            "__stcs(reinterpret_cast<int4*>(y + i), v.get_bits());",
        ),
        # the functional-cast spelling and an indexed word pointer
        (
            "f128(reinterpret_cast<const int4*>(x)[blockIdx.x])",
            "reinterpret_cast<int4*>(y)[blockIdx.x] = v.get_bits();",
        ),
    ],
)
def test_word_constructor_and_getter_are_vector_loads_and_stores(parse, load, store) -> None:
    k = _kernel(
        parse,
        WORDS
        + f"""
__global__ void k(float* y, const float* x) {{
    int i = blockIdx.x * f128::size;
    f128 v = {load};
    for (int q = 0; q < f128::size; q++) {{ v[q] = v[q] * 2.0f; }}
    {store}
}}""",
    )
    casts = _vector_accesses(k)
    assert len(casts) == 2, casts
    assert {c.to.pointee.const for c in casts} == {True, False}
    assert all(c.operand.ty.pointee.name == "float32" for c in casts)
    assert not any(isinstance(c.to, A.PointerType) and c.to.pointee.name == "int4" for c in casts)


@pytest.mark.parametrize(
    ("body", "what"),
    [
        # the word of a vector used as a value
        ("int4 w = v.get_bits(); y[0] = (float)w.x;", "get_bits"),
        # a vector built from a word computed in registers
        ("int4 w = make_int4(1, 2, 3, 4); f128 u = f128{w}; y[0] = u[0];", "not loaded"),
    ],
)
def test_words_used_otherwise_are_refused_with_a_location(parse, body, what) -> None:
    tu = parse(WORDS + "__global__ void k(float* y) {\n    f128 v;\n    " + body + "\n}\n")
    (d,) = [d for d in tu.rejected.get("k", ()) if d.code == "C2N1010"][:1]
    assert what in d.message and d.loc.line == WORDS.count("\n") + 3, d


FILLS = """
template <class ElementType>
struct alignas(16) Packed128 {
    Packed128() = default;
    __device__ static Packed128 constant(ElementType value) {
        Packed128 result;
        for (int k = 0; k < size; ++k) {
            result.payload[k] = value;
        }
        return result;
    }
    __device__ static Packed128 zeros() { return constant(0.f); }
    __device__ static Packed128 ones() { return constant(1.f); }
    __device__ ElementType& operator[](int index) { return payload[index]; }
    static constexpr const size_t size = sizeof(int4) / sizeof(ElementType);
    ElementType payload[size];
};
struct alignas(16) Vec8 {
    static Vec8 splat(float v) { Vec8 r; for (unsigned j = 0; j < 8; j++) r.lanes[j] = v; return r; }
    static Vec8 minus_one() { return splat(-1.0f); }
    float lanes[8];
};
typedef Packed128<float> f128;
__global__ void k(float* out, const float* in, float c, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * f128::size;
    if (i >= n) return;
    f128 acc = f128::zeros();
    f128 one = f128::ones();
    f128 cc = Packed128<float>::constant(c);
    Vec8 m = Vec8::minus_one();
    Vec8 h = Vec8::splat(0.5f);
    for (int k = 0; k < f128::size; k++) acc[k] = in[i + k] * cc[k] + one[k];
    for (int k = 0; k < f128::size; k++) out[i + k] = acc[k] + m.lanes[k] * h.lanes[k + 4];
}
"""


def test_static_fill_methods_are_broadcasts() -> None:
    import sys
    from pathlib import Path

    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "simt"))
    from simt_helpers import run

    x = np.linspace(-1, 1, 64).astype(np.float32)
    got = run(FILLS, "k", block=(16,), out=np.zeros(64, np.float32), **{"in": x}, c=3.0, n=64)
    np.testing.assert_array_equal(got["out"], x * np.float32(3) + 1 - np.float32(0.5))
