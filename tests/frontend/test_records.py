"""Record structs (every member of one scalar type) lower to short vectors, one lane a member."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from cuda2nki.frontend import ast as A
from cuda2nki.frontend.visit import find

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "simt"))
from simt_helpers import run  # noqa: E402


@pytest.mark.parametrize(
    ("decl", "tname"),
    [
        ("struct Pair { float lo; float hi; };", "Pair"),
        ("typedef struct { float lo, hi; } Pair;", "Pair"),
        ("typedef struct pair_s { float lo; float hi; } Pair;", "pair_s"),
        ("struct __align__(8) Pair { const float lo; float hi; };", "Pair"),
        ("struct Pair {\n public:\n  float lo;  // low\n  float hi;\n};", "Pair"),
    ],
)
def test_record_spellings_type_as_vectors(parse, decl: str, tname: str) -> None:
    tu = parse(
        decl + "\n__global__ void k(Pair* p, float* o) {\n"
        "  Pair q = p[threadIdx.x];\n  o[threadIdx.x] = q.hi - p->lo;\n}\n"
    )
    assert tu.rejected == {}, tu.diagnostics
    (k,) = tu.kernels
    pt = k.params[0].ty
    assert isinstance(pt, A.PointerType) and isinstance(pt.pointee, A.VectorType)
    assert (pt.pointee.name, pt.pointee.base.name, pt.pointee.width) == (tname, "float32", 2)
    assert pt.pointee.align == 4
    lanes = sorted((m.field, m.arrow) for m in find(k.body, A.Member))
    assert lanes == [("x", True), ("y", False)]


def test_wide_record_members_are_lane_indices(parse) -> None:
    tu = parse(
        "typedef struct { int a, b, c, d, e; } Five;\n"
        "__global__ void k(Five* f, int* o) { o[0] = f->e + f[1].a; }\n"
    )
    assert tu.rejected == {}, tu.diagnostics
    idx = [i for i in find(tu.kernels[0].body, A.Index) if isinstance(i.base.ty, A.VectorType)]
    assert sorted(i.index.value for i in idx) == [0, 4]


@pytest.mark.parametrize(
    "decl",
    [
        "struct P { static const int k = 2; float a; };",  # a static member
    ],
)
def test_other_structs_stay_refused(parse, decl: str) -> None:
    # structs of plain members of different types (pointers, arrays) are not records but
    # are lowered by their members or bytes: see test_simt_aggregates.py; structs with member
    # functions are aggregates too: see test_methods.py; bit-fields: see test_unions.py
    tu = parse(decl + "\n__global__ void k(P* p, float* x) { x[0] = 1; }\n")
    assert [d.code for d in tu.rejected["k"]] == ["C2N1025"]


def test_unknown_member_is_a_diagnostic(parse) -> None:
    tu = parse(
        "struct Pair { float lo, hi; };\n"
        "__global__ void k(Pair* p, float* o) { o[0] = p[0].mid; }\n"
    )
    (d,) = tu.rejected["k"]
    assert d.code == "C2N1030" and "mid" in d.message and d.loc.line == 2


REC = """
struct MeanVar { float mean; float rstd; };
typedef struct { int lo, hi; } Span;
typedef struct body_s { float x, y, z, vx, vy; } Body;

__device__ MeanVar stats(const float* x, int n) {
    float s = 0.f;
    for (int i = 0; i < n; i++) s += x[i];
    float m = s / n, v = 0.f;
    for (int i = 0; i < n; i++) v += (x[i] - m) * (x[i] - m);
    return {m, v / n};
}

__global__ void norm_rows(float* out, const float* x, MeanVar* st, const Span* spans,
                          Span whole, int rows, int n) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    MeanVar mv = stats(x + r * n, n);
    st[r] = mv;
    Span sp = spans[r];
    if (sp.hi > whole.hi) sp.hi = whole.hi;
    for (int i = sp.lo; i < sp.hi; i++) out[r * n + i] = x[r * n + i] - mv.mean;
}

__global__ void drift(Body* b, float dt, int n) {
    __shared__ struct body_s tile[32];
    int i = threadIdx.x;
    if (i < n) tile[i] = b[i];
    __syncthreads();
    if (i < n) {
        Body* p = &tile[(i + 1) % n];
        b[i].x = tile[i].x + tile[i].vx * dt;
        b[i].y = p->vy;
    }
}
"""


def test_records_run_in_the_simt_interpreter() -> None:
    rng = np.random.default_rng(3)
    rows, n = 6, 8
    x = rng.standard_normal(rows * n).astype(np.float32)
    spans = np.array([[0, 8], [2, 5], [1, 1], [0, 3], [4, 9], [7, 8]], np.int32)
    got = run(
        REC,
        "norm_rows",
        grid=(2,),
        block=(4,),
        out=np.zeros(rows * n, np.float32),
        x=x,
        st=np.zeros(rows * 2, np.float32),
        spans=spans.reshape(-1),
        whole=np.array([0, 7], np.int32),
        rows=rows,
        n=n,
    )
    xr = x.reshape(rows, n).astype(np.float64)
    st = got["st"].reshape(rows, 2)
    np.testing.assert_allclose(st[:, 0], xr.mean(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(st[:, 1], xr.var(1), rtol=1e-4, atol=1e-6)
    want = np.zeros((rows, n))
    for r, (lo, hi) in enumerate(spans):
        hi = min(hi, 7)
        want[r, lo:hi] = xr[r, lo:hi] - st[r, 0]
    np.testing.assert_allclose(got["out"].reshape(rows, n), want, rtol=1e-5, atol=1e-6)

    b = rng.standard_normal((20, 5)).astype(np.float32)
    got = run(REC, "drift", grid=(1,), block=(32,), b=b.reshape(-1), dt=0.5, n=20)["b"]
    want = b.copy()
    want[:, 0] = b[:, 0] + b[:, 3] * np.float32(0.5)
    want[:, 1] = np.roll(b[:, 4], -1)
    np.testing.assert_array_equal(got.reshape(20, 5), want)


@pytest.mark.parametrize(
    "decl",
    [
        "union Word { unsigned long long data; };",
        "typedef union { uint64_t data; } Word;",
        "union Word {\n  // one member\n  uint64_t data;\n};",
    ],
)
def test_single_member_union_is_a_one_lane_record(decl: str) -> None:
    src = (
        "#include <stdint.h>\n" + decl + "\n"
        "__global__ void k(Word* t, const Word* s, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    Word w = s[i];\n"
        "    if (i < n) t[i].data = w.data * 3 + i;\n}\n"
    )
    s = np.arange(64, dtype=np.uint64) << np.uint64(33)
    out = run(src, grid=(2,), block=(32,), t=np.zeros(64, np.uint64), s=s, n=50)
    want = np.where(np.arange(64) < 50, s * np.uint64(3) + np.arange(64, dtype=np.uint64), 0)
    np.testing.assert_array_equal(out["t"], want)


def test_union_of_several_members_is_its_bytes(parse) -> None:
    # not a record: its members overlap (see test_unions.py)
    tu = parse("union U { float f; int i; };\n__global__ void k(U* u) { u[0].i = 1; }\n")
    assert tu.rejected == {}, tu.diagnostics
    (p,) = tu.kernels[0].params
    assert isinstance(p.ty.pointee, A.VectorType) and p.ty.pointee.base.name == "uint8"
