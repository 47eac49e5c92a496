"""Structs whose members have different types, held and passed by value, are replaced by one
variable per member (see cuda2nki.frontend.aggregates) and run like the struct would."""

from __future__ import annotations

import numpy as np
import pytest
from simt_helpers import fault, run, tu_of

from cuda2nki.frontend import ast as A
from cuda2nki.frontend import parse_source
from cuda2nki.frontend.visit import find

# a matrix descriptor passed by value, sub-matrices returned by a helper, a shared-tiled product
MATMUL = """
#define TILE 8
DESCRIPTOR
__device__ float get(const MATRIX m, int r, int c) { return m.elements[r * m.stride + c]; }
__device__ void put(MATRIX m, int r, int c, float v) { m.elements[r * m.stride + c] = v; }
__device__ MATRIX sub(MATRIX m, int br, int bc) {
    SUB_BODY
}
__global__ void mm(MATRIX A, MATRIX B, MATRIX C) {
    int br = blockIdx.y, bc = blockIdx.x;
    int r = threadIdx.y, c = threadIdx.x;
    MATRIX Cs = sub(C, br, bc);
    float acc = 0.0f;
    for (int t = 0; t < A.width / TILE; ++t) {
        MATRIX As;
        As = sub(A, br, t);
        MATRIX Bs = sub(B, t, bc);
        __shared__ float sa[TILE][TILE];
        __shared__ float sb[TILE][TILE];
        sa[r][c] = get(As, r, c);
        sb[r][c] = get(Bs, r, c);
        __syncthreads();
        for (int e = 0; e < TILE; ++e) acc += sa[r][e] * sb[e][c];
        __syncthreads();
    }
    put(Cs, r, c, acc);
}
"""

DESCRIPTORS = {
    "typedef_anonymous": (
        "typedef struct { int width; int height; int stride; float* elements; } Matrix;",
        "Matrix",
    ),
    "tagged_struct_keyword": (
        "struct Mat { int width, height; int stride; float *elements; };",
        "struct Mat",
    ),
    "typedef_tagged_cpp": (
        "typedef struct MatT { float* elements; int stride; unsigned width; int height; } Mt;",
        "Mt",
    ),
}

SUB_BODIES = {
    "member_stores": "MATRIX s;\n s.width = TILE; s.height = TILE; s.stride = m.stride;\n"
    "    s.elements = &m.elements[m.stride * TILE * br + TILE * bc];\n    return s;",
    "copy_then_move": "MATRIX s = m;\n s.elements = m.elements + m.stride * TILE * br + TILE * bc;"
    "\n    s.width = s.height = TILE;\n    return s;",
}


@pytest.mark.parametrize("body", sorted(SUB_BODIES))
@pytest.mark.parametrize("desc", sorted(DESCRIPTORS))
def test_matrix_descriptor_matmul(desc: str, body: str) -> None:
    decl, name = DESCRIPTORS[desc]
    src = (
        MATMUL.replace("DESCRIPTOR", decl)
        .replace("SUB_BODY", SUB_BODIES[body])
        .replace("MATRIX", name)
    )
    m, k, n = 16, 24, 32
    rng = np.random.default_rng(len(desc) + len(body))
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    tu = tu_of(src)
    mm = tu.function("mm")
    names = [p.name for p in mm.params]
    assert names[:4] == [f"A__{f}" for f in _order(desc)]
    args: dict[str, object] = {}
    for var, arr, (rows, cols) in (("A", a, (m, k)), ("B", b, (k, n)), ("C", None, (m, n))):
        vals = {"width": cols, "height": rows, "stride": cols}
        vals["elements"] = arr.ravel() if arr is not None else np.zeros(m * n, np.float32)
        args.update({f"{var}__{f}": v for f, v in vals.items()})
    out = run(src, "mm", grid=(n // 8, m // 8), block=(8, 8), **args)
    np.testing.assert_allclose(out["C__elements"].reshape(m, n), a @ b, rtol=1e-4, atol=1e-4)


def _order(desc: str) -> list[str]:
    if desc == "typedef_tagged_cpp":
        return ["elements", "stride", "width", "height"]
    return ["width", "height", "stride", "elements"]


# a parameter block: by value, by const reference, copied, built with braces, nested
PARAMS = """
struct Span { int lo; int hi; };
struct Block { Span span; float scale; const float* in; float* out; };
struct Job { Block blk; int stride; };
__device__ Block shifted(const Block& b, int by) {
    return {{b.span.lo + by, b.span.hi + by}, b.scale, b.in, b.out};
}
__device__ float apply(Block b, int i) { return b.scale * b.in[i]; }
__global__ void k(Job job, int n) {
    Job j = job;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    Block b = j.blk;
    if (i >= n) return;
    if (i >= b.span.lo && i < b.span.hi) b.out[i] = apply(b, i);
    Block c = shifted(b, j.stride);
    if (i >= c.span.lo && i < c.span.hi) c.out[i] += 1.0f;
}
"""


def test_nested_parameter_block() -> None:
    tu = tu_of(PARAMS)
    names = [p.name for p in tu.function("k").params]
    assert names == [
        "job__blk__span",
        "job__blk__scale",
        "job__blk__in",
        "job__blk__out",
        "job__stride",
        "n",
    ]
    span = tu.function("k").params[0]  # a record of ints passed by value: a tensor of its lanes
    assert span.by_value and span.ty.pointee.name == "int32"
    x = np.random.default_rng(3).standard_normal(100).astype(np.float32)
    out = run(
        PARAMS,
        grid=(2,),
        block=(64,),
        job__blk__span=np.array([10, 60], np.int32),
        job__blk__scale=np.float32(2.5),
        job__blk__in=x,
        job__blk__out=np.zeros(100, np.float32),
        job__stride=30,
        n=100,
    )["job__blk__out"]
    ref = np.zeros(100, np.float32)
    ref[10:60] = 2.5 * x[10:60]
    ref[40:90] += 1.0
    np.testing.assert_allclose(out, ref, rtol=1e-6)


def test_struct_returned_into_members() -> None:
    tu = tu_of(PARAMS)
    f = tu.function("shifted")
    assert f.return_type == A.ScalarType(name="void")
    assert [p.name for p in f.params][-4:] == [
        "__ret__span",
        "__ret__scale",
        "__ret__in",
        "__ret__out",
    ]
    call = [c for c in find(tu.function("k"), A.Call) if c.func == "shifted"][0]
    assert len(call.args) == 4 + 1 + 4
    assert all(isinstance(a, A.Unary) and a.op == "&" for a in call.args[-4:])


# structs in memory: arrays of structs read and written at their C layout
MEMORY = """
struct Particle { float3 pos; int id; double mass; short tag; };
struct Cell { int count; Particle first; float bounds[2][2]; };
__global__ void k(const Cell* cells, Particle* out, float* w, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Particle p = cells[i].first;
    p.pos.x += cells[i].bounds[1][0];
    p.id = cells[i].count * 10 + p.id;
    out[i] = p;
    w[i] = (float)(cells[i].first.mass * (cells + i)->count) + (float)p.tag + sizeof(Cell);
    out[n + i] = cells[i].first;
    out[2 * n + i].pos.y = -cells[i].first.pos.z;
}
"""


def test_arrays_of_structs_at_their_c_layout() -> None:
    particle = np.dtype(
        [("pos", np.float32, 3), ("id", np.int32), ("mass", np.float64), ("tag", np.int16)],
        align=True,
    )
    cell = np.dtype(
        [("count", np.int32), ("first", particle), ("bounds", np.float32, (2, 2))], align=True
    )
    assert (particle.itemsize, cell.itemsize) == (32, 56)
    n = 40
    rng = np.random.default_rng(7)
    cells = np.zeros(n, cell)
    cells["count"] = rng.integers(0, 9, n)
    cells["first"]["pos"] = rng.standard_normal((n, 3))
    cells["first"]["id"] = rng.integers(0, 100, n)
    cells["first"]["mass"] = rng.random(n)
    cells["first"]["tag"] = rng.integers(-5, 5, n)
    cells["bounds"] = rng.standard_normal((n, 2, 2))
    out = np.zeros(3 * n, particle)
    res = run(MEMORY, grid=(2,), block=(32,), cells=cells, out=out, w=np.zeros(n, np.float32), n=n)
    got = res["out"].view(particle) if res["out"].dtype != particle else res["out"]
    first = cells["first"]
    want_pos = first["pos"].copy()
    want_pos[:, 0] += cells["bounds"][:, 1, 0]
    np.testing.assert_allclose(got["pos"][:n], want_pos, rtol=1e-6)
    np.testing.assert_array_equal(got["id"][:n], cells["count"] * 10 + first["id"])
    np.testing.assert_array_equal(got[n : 2 * n], first)
    np.testing.assert_allclose(got["pos"][2 * n :, 1], -first["pos"][:, 2])
    wref = (first["mass"] * cells["count"]).astype(np.float32) + first["tag"] + 56
    np.testing.assert_allclose(res["w"], wref, rtol=1e-6)


@pytest.mark.parametrize(
    ("body", "line"),
    [
        (
            "struct T { int k[2]; float x; };\n__global__ void k(T t, float* o) {\n"
            "    T u = t;\n    o[0] = u.x;\n}",
            4,
        ),
        ("__global__ void k(S s, float* o) {\n    S* p = &s;\n    o[0] = p->x;\n}", 3),
        (
            "__device__ float f(S s) { return s.x; }\n__global__ void k(S s, float* o) {\n"
            "    o[0] = f(s) + sizeof(s);\n    S arr[4];\n}",
            4,
        ),
        (
            "__device__ S mk(int n) { S s; s.n = n; s.x = 0; return s; }\n"
            "__global__ void k(float* o) {\n    o[0] = mk(2).x;\n}",
            4,
        ),
    ],
)
def test_struct_uses_left_refused(body: str, line: int) -> None:
    src = "struct S { int n; float x; };\n" + body + "\n"
    tu = parse_source(src, "k.cu")
    diags = tu.rejected.get("k")
    assert diags, tu.diagnostics
    assert diags[0].code == "C2N1025" and diags[0].loc.line == line, diags


# a file-scope struct: one global per member (a kernel fills and reads it back)
GLOBAL = """
struct Stats { int count; float total; float2 range; };
__device__ Stats stats;
__constant__ Stats preset = {3, 0.5f, {-1.0f, 1.0f}};
__global__ void k(const float* x, float* y, int n) {
    int i = threadIdx.x;
    if (i == 0) { stats.count = n; stats.total = preset.total * preset.count; }
    __syncthreads();
    if (i < stats.count) y[i] = fminf(fmaxf(x[i], preset.range.x), preset.range.y) + stats.total;
}
"""


def test_file_scope_struct_members() -> None:
    x = np.linspace(-3, 3, 32).astype(np.float32)
    res = run(GLOBAL, block=(32,), x=x, y=np.zeros(32, np.float32), n=20, full=True)
    ref = np.zeros(32, np.float32)
    ref[:20] = np.clip(x[:20], -1, 1) + 1.5
    np.testing.assert_allclose(res.outputs["y"], ref, rtol=1e-6)
    assert res.globals["stats__count"][0] == 20


def test_struct_pointing_to_itself() -> None:
    # a linked-list node: the pointer member makes the struct 16 bytes; following it needs a
    # pointer read from memory, which the interpreter reports (C2N1505) rather than guesses
    src = """
    struct Node { int key; Node* next; };
    __global__ void k(Node* list, int* out, int n) {
        Node* e = list + 1;
        out[0] = e->key + sizeof(Node);
        if (n > 1) e = e->next;
        out[1] = e->key;
    }"""
    node = np.dtype([("key", np.int32), ("next", np.uint64)], align=True)
    nodes = np.zeros(2, node)
    nodes["key"] = [5, 7]
    out = run(src, block=(1,), list=nodes, out=np.zeros(2, np.int32), n=1)["out"]
    np.testing.assert_array_equal(out, [7 + 16, 7])
    d = fault(src, block=(1,), list=nodes, out=np.zeros(2, np.int32), n=2)
    assert d.code == "C2N1505" and d.loc.line == 6


def test_struct_of_vector_members() -> None:
    # members of one vector type are members, not lanes of a record
    src = """
    struct Quad { uint4 x, y; };
    __device__ Quad swap(Quad q) { Quad r; r.x = q.y; r.y = q.x; return r; }
    __global__ void k(const Quad* in, unsigned* out) {
        Quad q = swap(in[threadIdx.x]);
        out[threadIdx.x] = q.x.w * 10u + q.y.x;
    }"""
    vals = np.arange(8 * 8, dtype=np.uint32).reshape(8, 8)
    out = run(src, block=(8,), **{"in": vals.ravel()}, out=np.zeros(8, np.uint32))["out"]
    np.testing.assert_array_equal(out, vals[:, 7] * 10 + vals[:, 0])


def test_sizeof_a_type_parameter_in_an_uninstantiated_kernel() -> None:
    src = (
        "template <typename T> __global__ void k(T* p, size_t bytes) {\n"
        "    size_t n = bytes / sizeof(T);\n    if (threadIdx.x < n) p[threadIdx.x] = 0;\n}\n"
    )
    tu = parse_source(src, "k.cu")
    assert tu.rejected == {} and [f.name for f in tu.kernels] == ["k"], tu.diagnostics
