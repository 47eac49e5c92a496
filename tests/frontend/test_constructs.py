"""Each construct kernels use lowers to the documented AST with C types."""

from __future__ import annotations

import math

import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.typesys import BOOL, DOUBLE, FLOAT, INT, LONG, UINT, ULONG
from cuda2nki.frontend.visit import find


def _body(parse, body: str, params: str = "float* p, int n") -> A.Function:
    tu = parse(f"__global__ void k({params}) {{\n{body}\n}}\n")
    assert tu.rejected == {}, tu.diagnostics
    return tu.kernels[0]


def _init(parse, decl: str, params: str = "float* p, int n") -> A.Expr:
    k = _body(parse, decl, params)
    return [d for d in find(k, A.VarDecl)][-1].init


@pytest.mark.parametrize(
    ("expr", "ty"),
    [
        ("1 + 2", INT),
        ("1u + 2", UINT),
        ("n + 1u", UINT),
        ("1.0f * n", FLOAT),
        ("1.0 * n", DOUBLE),
        ("1.0f + 2.0", DOUBLE),
        ("(long long)n + 1u", LONG),
        ("3000000000", LONG),
        ("0xffffffff", UINT),
        ("1ull << 40", ULONG),
        ("n < 3", BOOL),
        ("!n", BOOL),
        ("n / 2", INT),
        ("threadIdx.x + n", UINT),
        ("-threadIdx.x", UINT),
        ("(short)n + (char)n", INT),
        ("__float2half(1.0f) + 1.0f", FLOAT),
        ("__float2half(1.0f) * __float2half(2.0f)", FLOAT),
        ("sizeof(float4)", ULONG),
        ("p[0] > 0 ? 1 : 2.0f", FLOAT),
        ("n > 0 ? 1 : 2u", UINT),
        ("expf(1.0f)", FLOAT),
        ("exp(1.0f)", FLOAT),
        ("exp(1.0)", DOUBLE),
        ("sqrt(4)", DOUBLE),
        ("min(n, 3)", INT),
        ("max(1.0f, n)", FLOAT),
        ("fmaxf(1, 2)", FLOAT),
        ("abs(-n)", INT),
        ("__shfl_down_sync(0xffffffffu, p[0], 1)", FLOAT),
        ("__ballot_sync(0xffffffff, n > 0)", UINT),
        ("atomicAdd(&p[0], 1.0f)", FLOAT),
        ("__ldg(&p[1])", FLOAT),
        ("(n, 2.0)", DOUBLE),
        ("n & 7", INT),
        ("n >> 1u", INT),
        ("'a'", A.ScalarType(name="int8")),
    ],
)
def test_expression_types(parse, expr, ty):
    e = _init(parse, f"    auto v = {expr};")
    assert e.ty == ty, (expr, e)


def test_float_literals_are_rounded_to_their_type(parse):
    k = _body(parse, "    float a = 0.1f; double b = 0.1; float c = 1e-3; p[0] = a + b + c;")
    lits = find(k, A.FloatLit)
    assert lits[0].value == float(__import__("numpy").float32(0.1)) and lits[0].ty == FLOAT
    assert lits[1].value == 0.1 and lits[1].ty == DOUBLE
    assert lits[2].ty == DOUBLE


def test_negative_literals_are_unary_minus(parse):
    e = _init(parse, "    int v = -2147483648;")
    assert isinstance(e, A.Unary) and e.op == "-" and e.operand.value == 2147483648 and e.ty == LONG


def test_statements(parse):
    k = _body(
        parse,
        """\
    int s = 0;
    for (int i = 0, j = n; i < j; ++i, --j) { if (i == 3) continue; s += i; }
    while (s > 100) s /= 2;
    do { s++; } while (s < 10);
    switch (n & 3) {
        case 0:
        case 1: s = 1; break;
        case 2: { s = 2; }
        default: s = 3;
    }
    p[0] = s > 0 ? s : -s;
    if (n) return;
    p[1] = (float)s;""",
    )
    loop = find(k, A.For)[0]
    assert [d.name for d in loop.init] == ["i", "j"]
    assert isinstance(loop.step, A.Comma) and [e.op for e in loop.step.exprs] == ["pre++", "pre--"]
    sw = find(k, A.Switch)[0]
    assert [c.values for c in sw.cases] == [(0, 1), (2,), ()]
    assert isinstance(sw.cases[0].body[-1], A.Break)
    assert find(k, A.While) and find(k, A.DoWhile) and find(k, A.Ternary) and find(k, A.Return)
    cast = find(k, A.Cast)[0]
    assert cast.kind == "c" and cast.to == FLOAT


def test_assignments_update_and_casts(parse):
    k = _body(
        parse,
        """\
    int x = n;
    x += 1; x -= 1; x *= 2; x /= 2; x %= 3; x <<= 1; x >>= 1; x &= 7; x |= 8; x ^= 1;
    x++; x--; ++x; --x;
    float f = static_cast<float>(x) + float(x) + (float)x;
    unsigned u = reinterpret_cast<unsigned&>(f);
    p[x] = f;""",
    )
    ops = [a.op for a in find(k, A.Assign)]
    assert ops[:10] == ["+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "|=", "^="]
    ups = [u.op for u in find(k, A.Unary) if u.op.endswith(("++", "--"))]
    assert ups == ["post++", "post--", "pre++", "pre--"]
    kinds = [c.kind for c in find(k, A.Cast)]
    assert kinds[:3] == ["static", "functional", "c"]


def test_vector_types_constructors_members_and_vectorised_access(parse):
    k = _body(
        parse,
        """\
    float4 v = reinterpret_cast<const float4*>(p)[threadIdx.x];
    float2 w = make_float2(v.x, v.y);
    int4 q = make_int4(1, 2, 3, 4);
    half2 h = __floats2half2_rn(v.z, v.w);
    v.x = w.y + q.z;
    reinterpret_cast<float4*>(p)[0] = v;
    float4* vp = (float4*)p;
    vp->w = 1.0f;""",
    )
    decls = {d.name: d for d in find(k, A.VarDecl)}
    assert decls["v"].ty.name == "float4" and decls["v"].ty.width == 4
    idx = decls["v"].init
    assert (
        isinstance(idx, A.Index) and isinstance(idx.base, A.Cast) and idx.base.kind == "reinterpret"
    )
    assert idx.base.to.pointee.name == "float4"
    assert decls["w"].init.func == "make_float2" and decls["w"].init.ty.name == "float2"
    assert decls["h"].ty.name == "half2" and decls["h"].ty.base.name == "float16"
    m = find(k, A.Member)
    assert {x.field for x in m} >= {"x", "y", "z", "w"} and all(x.ty is not None for x in m)
    assert any(x.arrow for x in m)


def test_local_arrays_constants_and_sizeof(parse):
    k = _body(
        parse,
        """\
    constexpr int R = 2;
    const int W = 2 * R + 1;
    float taps[W] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};
    int idx[] = {1, 2, 3};
    float m[2][3] = {{1, 2, 3}, {4, 5, 6}};
    p[0] = taps[R] + idx[2] + m[1][2] + sizeof(taps) / sizeof(taps[0]);""",
    )
    d = {x.name: x for x in find(k, A.VarDecl)}
    assert d["R"].constexpr and d["taps"].ty == A.ArrayType(elem=FLOAT, dims=(5,))
    assert d["idx"].ty.dims == (3,) and isinstance(d["m"].init.items[0], A.InitList)
    assert d["m"].ty.dims == (2, 3)


def test_builtins_and_header_constants(parse):
    k = _body(
        parse,
        """\
    int t = threadIdx.x + threadIdx.y + threadIdx.z + blockIdx.x + blockDim.y + gridDim.z;
    int w = warpSize;
    p[0] = FLT_MAX + INFINITY + CUDART_PI_F + M_PI + INT_MAX;
    p[1] = -std::numeric_limits<float>::max();""",
    )
    names = {(b.name, b.dim) for b in find(k, A.Builtin)}
    assert ("warpSize", "") in names and ("gridDim", "z") in names and len(names) == 7
    floats = [f.value for f in find(k, A.FloatLit)]
    assert math.isinf(floats[1]) and abs(floats[0] - 3.4028234663852886e38) < 1e30


def test_constant_and_device_globals(parse):
    tu = parse("""\
__constant__ float coeffs[4] = {1, 2, 3, 4};
__device__ int counter;
const int N = 3;
constexpr float SCALE = 0.5f;
enum { TILE = 8, HALF_TILE = TILE / 2 };
__global__ void k(float* p) {
    __shared__ float s[TILE][HALF_TILE];
    p[0] = coeffs[N] * SCALE + s[0][0];
    atomicAdd(&counter, 1);
}
""")
    assert tu.rejected == {}
    assert [(g.name, g.space) for g in tu.globals] == [("coeffs", "constant")]
    k = tu.kernels[0]
    # the __device__ variable is memory of the kernel: its trailing parameter
    assert [(p.name, p.symbol) for p in k.params] == [("p", False), ("counter", True)]
    assert k.body.body[0].ty.dims == (8, 4)
    names = [n.name for n in find(k, A.Name)]
    assert "coeffs" in names and "counter" in names
    assert 3 in [i.value for i in find(k, A.IntLit)]  # file-scope integer constants fold


def test_function_kinds_qualifiers_and_params(parse):
    tu = parse("""\
typedef float real;
using idx_t = unsigned int;
__host__ __device__ inline real twice(real x) { return 2 * x; }
static __device__ __forceinline__ idx_t lane() { return threadIdx.x & 31; }
extern "C" __global__ void __launch_bounds__(256, 2)
k(const real* __restrict__ a, real* __restrict__ b, const size_t n, const int m[4]) {
    b[lane()] = twice(a[0]) + n + m[0];
}
namespace ops { __global__ void k2(double* d) { d[0] = 1; } }
""")
    assert tu.rejected == {}
    assert [(f.name, f.kind) for f in tu.functions] == [
        ("twice", "host_device"),
        ("lane", "device"),
        ("k", "global"),
        ("k2", "global"),
    ]
    k = tu.function("k")
    assert k.launch_bounds == (256, 2)
    assert [str(p.ty.name if hasattr(p.ty, "name") else "") for p in k.params][2] == "uint64"
    assert k.params[3].ty == A.PointerType(pointee=A.ScalarType(name="int32", const=True))
    assert tu.function("lane").forceinline and tu.function("lane").return_type == UINT


def test_struct_of_mixed_members_by_value_and_through_a_pointer(parse):
    # members of different types: not a record struct (see test_records.py); by value it is
    # one variable per member (see cuda2nki.frontend.aggregates), in memory its bytes
    tu = parse(
        "struct P { int n; float* data; };\ntypedef struct { float x; double y; } Q;\n"
        "__global__ void k(P p, float* x) { x[0] = 1; }\n"
        "__global__ void k2(float* x) { Q q; x[0] = 1; }\n"
        "__global__ void k3(P* p, float* x) { x[0] = 1; }\n"
    )
    assert [p.name for p in tu.function("k").params] == ["p__n", "p__data", "x"]
    assert tu.function("k2") is not None
    pt = tu.function("k3").params[0].ty  # in memory: the struct's bytes at its C layout
    assert (pt.pointee.name, pt.pointee.base.name, pt.pointee.width, pt.pointee.align) == (
        "P",
        "uint8",
        16,
        8,
    )


def test_explicit_template_instantiation(parse):
    tu = parse(
        "template <int B> __global__ void k(float* p) { p[0] = B; }\n"
        "template __global__ void k<16>(float*);\n"
    )
    (k,) = tu.kernels
    assert k.template_args == (("B", 16),)


def test_realistic_llmc_style_kernel():
    from pathlib import Path

    from cuda2nki.frontend import parse_file

    tu = parse_file(Path(__file__).parent / "data" / "layernorm_llmc_style.cu")
    assert tu.rejected == {} and tu.diagnostics == ()
    (k,) = tu.kernels
    assert k.template_args == (("BLOCK_SIZE", 512),) and k.launch_bounds == (512,)
    assert k.params[0].ty == A.PointerType(pointee=A.ScalarType(name="bfloat16"), restrict=True)
    casts = [c for c in find(k, A.Cast) if c.to == A.ScalarType(name="bfloat16")]
    assert casts and casts[0].kind == "c"  # `(floatX)(expr)` is a cast, not a call
    (site,) = tu.launch_sites
    assert site.shared_bytes is not None and site.block_text == "block_size"


def test_vector_aggregate_initialisation(parse):
    k = _body(parse, "    float4 a = {1.0f, 2.0f};\n    __half2 h = {};\n    p[0] = a.x;")
    a, h = find(k, A.VarDecl)
    assert a.init.func == "make_float4" and len(a.init.args) == 4 and a.init.args[3].value == 0
    assert h.init.func == "make_half2" and len(h.init.args) == 2


def test_if_constexpr_keeps_the_taken_branch_and_assert_messages(parse):
    tu = parse("""\
template <typename T>
__global__ void k(T* p, int n) {
    assert(n > 0 && "n must be positive");
    if constexpr (sizeof(T) == 4) { p[0] = 1; } else { p[0] = undefined_in_this_branch; }
}
void h(float* p) { k<float><<<1, 1>>>(p, 1); }
""")
    assert tu.rejected == {}, tu.diagnostics
    k = tu.kernels[0]
    assert not find(k, A.If) and find(k, A.Assign)[0].value.value == 1
    call = find(k, A.Call)[0]
    assert call.func == "assert" and find(call, A.BoolLit)[0].value is True


def test_overloaded_device_functions_resolve_by_argument_types(parse):
    tu = parse("""\
__device__ float twice(float x) { return 2.0f * x; }
__device__ double twice(double x) { return 2.0 * x; }
__device__ int twice(int a, int b) { return a + b; }
__global__ void k(float* f, double* d, int* i) {
    f[0] = twice(f[1]);
    d[0] = twice(d[1]);
    i[0] = twice(i[1], i[2]);
}
""")
    assert tu.rejected == {}, tu.diagnostics
    names = sorted(f.name for f in tu.functions if f.kind == "device")
    assert names == ["twice(float32)", "twice(float64)", "twice(int32, int32)"]
    calls = [(c.target, c.ty.name) for c in find(tu.kernels[0], A.Call)]
    assert calls == [
        ("twice(float32)", "float32"),
        ("twice(float64)", "float64"),
        ("twice(int32, int32)", "int32"),
    ]


def test_references_lower_to_pointers(parse):
    from pathlib import Path

    from cuda2nki.frontend import parse_file

    tu = parse_file(Path(__file__).parent / "data" / "references.cu")
    assert tu.rejected == {}, tu.diagnostics
    w = tu.function("welford")
    assert [
        str(p.ty.pointee.name) if isinstance(p.ty, A.PointerType) else p.ty.name for p in w.params
    ] == ["float32", "float32", "int32", "float32"]
    assert all(isinstance(a.target, A.Unary) and a.target.op == "*" for a in find(w, A.Assign))
    assert tu.function("scaled").params[0].ty == A.ScalarType(name="float32", const=True)
    assert tu.function("swap2<float32>").params[0].ty == A.PointerType(pointee=FLOAT)
    k = tu.kernels[0]
    call = [c for c in find(k, A.Call) if c.func == "welford"][0]
    assert [a.op if isinstance(a, A.Unary) else None for a in call.args] == ["&", "&", "&", None]
    slot = [d for d in find(k, A.VarDecl) if d.name == "slot"][0]
    assert isinstance(slot.ty, A.PointerType) and slot.init.op == "&"
    c = [d for d in find(k, A.VarDecl) if d.name == "c"][0]
    assert c.ty == A.ScalarType(name="float32", const=True)  # const ref to a temporary: a copy
    tu = parse(
        "__device__ void inc(int& x) { x++; }\n__global__ void k(int* p) { inc(p[0] + 1); }\n"
    )
    assert [d.code for d in tu.rejected["k"]] == ["C2N1030"]


def test_sized_types_auto_null_and_pointer_arithmetic(parse):
    k = _body(
        parse,
        """\
    long int a = 1; unsigned long long int b = 2; short int c = 3; signed char d = 4;
    auto i = threadIdx.x; const auto j = i + 1;
    float e = .5f + 1e10 + 0x1.8p3 + 1'000;
    if (p != NULL && p != nullptr) *(p + i) = e;
    float* r = p; r++; long diff = r - p;
    p[j] = a + b + c + d + e + diff;""",
    )
    d = {x.name: x.ty for x in find(k, A.VarDecl)}
    assert [d[n].name for n in "abcd"] == ["int64", "uint64", "int16", "int8"]
    assert d["i"] == UINT and d["j"] == A.ScalarType(name="uint32", const=True)
    assert d["r"] == A.PointerType(pointee=FLOAT) and d["diff"] == LONG


def test_float32_rounding_matches_numpy():
    import random

    import numpy as np

    from cuda2nki.frontend.typesys import to_float32

    rng = random.Random(5)
    values = [rng.uniform(-1, 1) * 10 ** rng.uniform(-50, 40) for _ in range(2000)]
    values += [3.4028235e38, 3.40282356e38, 2.0**128 - 2.0**103, 1e39, -1e39, 1.4e-45, 0.1]
    with np.errstate(over="ignore"):
        assert [to_float32(v) for v in values] == [float(np.float32(v)) for v in values]


@pytest.mark.parametrize("call", ["__ldg", "__ldcg", "__ldca", "__ldcs", "__ldlu", "__ldcv"])
@pytest.mark.parametrize("arg", ["&p[n]", "p + n"])
def test_cache_hinted_loads_are_dereferences(parse, call, arg):
    e = _init(parse, f"    float v = {call}({arg});", "const float* p, int n")
    assert isinstance(e, A.Unary) and e.op == "*", e
    assert e.ty is not None and e.ty.name == "float32"
    assert not find(_body(parse, f"    float v = {call}({arg});", "const float* p, int n"), A.Call)


@pytest.mark.parametrize("call", ["__stcg", "__stcs", "__stwb", "__stwt"])
def test_cache_hinted_stores_are_assignments(parse, call):
    k = _body(parse, f"    {call}(p + n, 2.0f * p[0]);")
    (a,) = find(k, A.Assign)
    assert a.op == "=" and isinstance(a.target, A.Unary) and a.target.op == "*"
    assert isinstance(a.target.operand, A.Binary) and a.ty == FLOAT
    assert not find(k, A.Call)
