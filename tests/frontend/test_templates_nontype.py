"""Non-type template parameters of every integral spelling: typed values, instantiation from
launch sites, ``--template`` and defaults, and C semantics of the substituted values in SIMT."""

from __future__ import annotations

import numpy as np
import pytest

from cuda2nki import simt
from cuda2nki.diagnostics import Severity
from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import find

SPELLINGS = [
    ("unsigned int N", "uint32"),
    ("unsigned N", "uint32"),
    ("const unsigned int N", "uint32"),
    ("int N", "int32"),
    ("const int N", "int32"),
    ("size_t N", "uint64"),
    ("std::size_t N", "uint64"),
    ("long long N", "int64"),
    ("unsigned long N", "uint64"),
    ("short N", "int16"),
    ("char N", "int8"),
]


@pytest.mark.parametrize(("decl", "tyname"), SPELLINGS)
def test_value_parameter_keeps_its_declared_type(parse, decl, tyname):
    tu = parse(
        f"#include <cstddef>\ntemplate <{decl}, typename T>\n"
        "__global__ void k(T* p) { p[threadIdx.x] = N; }\n"
        "void h(float* p) { k<5, float><<<1, 32>>>(p); }\n"
    )
    assert tu.rejected == {}
    (k,) = tu.kernels
    assert k.name == "k" and k.template_args == (("N", 5), ("T", A.ScalarType(name="float32")))
    (lit,) = [x for x in find(k, A.IntLit) if x.value == 5]
    assert lit.ty == A.ScalarType(name=tyname) and (lit.loc.line, lit.loc.col) == (3, 44)


def test_bool_parameter_is_a_bool_literal(parse):
    tu = parse(
        "template <typename T, bool ADD>\n"
        "__global__ void k(T* p, T v) { if (ADD) p[0] += v; else p[0] = v; }\n"
        "void h(int* p) { k<int, true><<<1, 1>>>(p, 2); }\n"
    )
    (k,) = tu.kernels
    assert k.template_args == (("T", A.ScalarType(name="int32")), ("ADD", 1))
    (cond,) = [x for x in find(k, A.BoolLit)]
    assert cond.value is True and cond.ty == A.ScalarType(name="bool")


def test_values_convert_to_the_parameter_type(parse):
    tu = parse(
        "template <unsigned int N> __global__ void k(unsigned* p) { p[0] = N; }\n"
        "template <unsigned char C> __global__ void c(int* p) { p[0] = C; }\n"
        "void h(unsigned* p, int* q) { k<-1><<<1, 1>>>(p); c<300><<<1, 1>>>(q); }\n"
    )
    k, c = tu.kernels
    assert k.template_args == (("N", 2**32 - 1),) and c.template_args == (("C", 44),)


def test_template_option_and_defaults(parse):
    src = (
        "template <typename T = float, unsigned int BLOCK = 128, bool CLAMP = false>\n"
        "__global__ void k(T* p) { p[threadIdx.x] = CLAMP ? 0 : BLOCK; }\n"
    )
    tu = parse(src, templates={"BLOCK": "64u", "CLAMP": "true"})
    assert tu.kernels[0].template_args == (
        ("T", A.ScalarType(name="float32")),
        ("BLOCK", 64),
        ("CLAMP", 1),
    )
    for launch in ("k<><<<1, 128>>>(p);", "k<<<1, 128>>>(p);"):  # defaults only
        tu = parse(src + "void h(float* p) { " + launch + " }\n")
        (k,) = tu.kernels
        assert k.name == "k" and k.template_args[1:] == (("BLOCK", 128), ("CLAMP", 0))
    tu = parse(src, templates={"BLOCK": "float"})
    assert [d.code for d in tu.diagnostics] == ["C2N1024", "C2N1023"]
    assert tu.kernels[0].template_params and not tu.kernels[0].template_args


def test_host_constant_of_unsigned_type_as_argument(parse):
    tu = parse(
        "template <unsigned int B> __global__ void k(float* p) { p[threadIdx.x] = B; }\n"
        "void h(float* p) {\n    constexpr unsigned int THREADS = 2 * 64u;\n"
        "    k<THREADS><<<1, THREADS>>>(p);\n}\n"
    )
    assert tu.kernels[0].template_args == (("B", 128),)


def test_unsigned_parameter_wraps_in_simt(parse):
    tu = parse(
        "template <unsigned int N, int M>\n"
        "__global__ void k(unsigned* u, int* s, float* f) {\n"
        "    u[0] = N - 300u;   // unsigned wraparound\n"
        "    s[0] = M - 300;    // signed\n"
        "    f[0] = (N - 1000 > 0) ? 1.0f : 2.0f;  // N - 1000 is unsigned: never negative\n"
        "    u[1] = N / 2 - M;\n"
        "}\n"
        "void h(unsigned* u, int* s, float* f) { k<256, 256><<<1, 1>>>(u, s, f); }\n"
    )
    assert tu.rejected == {}
    out = simt.run_kernel(
        tu,
        "k",
        grid=(1,),
        block=(1,),
        args={
            "u": np.zeros(2, np.uint32),
            "s": np.zeros(1, np.int32),
            "f": np.zeros(1, np.float32),
        },
    )
    assert out["u"].tolist() == [2**32 - 44, 2**32 - 128]
    assert out["s"].tolist() == [-44] and out["f"].tolist() == [1.0]


def test_uninstantiated_value_parameter_has_its_type():
    from cuda2nki.frontend.driver import lower_source

    tu = lower_source("template <size_t N> __global__ void k(float* p) { p[0] = N; }\n", "k.cu")
    (k,) = tu.kernels
    assert [(t.name, t.kind) for t in k.template_params] == [("N", "int")]
    (name,) = [x for x in find(k, A.Name) if x.name == "N"]
    assert name.ty == A.ScalarType(name="uint64")


def test_functional_cast_through_a_typename_parameter_or_typedef(parse):
    tu = parse(
        "typedef double real;\n"
        "template <typename T> __global__ void k(T* p, real* q) {\n"
        "    p[0] = T(1) / T(3);\n    q[0] = real(p[0]);\n}\n"
        "void h(int* p, double* q) { k<int><<<1, 1>>>(p, q); }\n"
    )
    assert tu.rejected == {}
    casts = find(tu.kernels[0], A.Cast)
    assert [(c.kind, c.to.name) for c in casts] == [
        ("functional", "int32"),
        ("functional", "int32"),
        ("functional", "float64"),
    ]


@pytest.mark.parametrize(
    ("decl", "call", "instance"),
    [
        ("int W", "twice<W>(p[i])", "twice<4>"),
        ("const unsigned int W", "twice<W>(p[i])", "twice<4>"),
        ("int W, int R", "twice<W>(p[i]) + twice<R>(1.0f)", "twice<2>"),
        ("unsigned W", "(float)twice< W >(p[i])", "twice<4>"),
    ],
)
def test_a_value_parameter_passed_on_to_a_device_template(parse, decl, call, instance):
    """``helper<W>`` inside a kernel instance: ``W`` is the kernel's value, never a type."""
    targs = "4, 2" if "R" in decl else "4"
    tu = parse(
        "template <int K> __device__ float twice(float x) { return x * K; }\n"
        f"template <{decl}>\n"
        f"__global__ void k(float* p) {{ int i = threadIdx.x; p[i] = {call}; }}\n"
        f"void h(float* p) {{ k<{targs}><<<1, 32>>>(p); }}\n"
    )
    assert tu.rejected == {} and not [d for d in tu.diagnostics if d.severity >= Severity.ERROR]
    assert tu.function(instance) is not None and tu.function("k") is not None
