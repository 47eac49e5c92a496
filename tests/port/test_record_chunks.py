"""Arrays of records on the flat layout: many records per partition row, each tile of records
moved by one DMA and its fields taken apart on chip, rather than one record per partition row
(``coalesce-dma`` with :mod:`cuda2nki.passes._record_fields`, then ``record-rows``).  Covered:
a field read only where a select or branch picks it, a sum or maximum over a record's array
member, and a map writing whole records (including an ``inout`` record written in place).
Each port passes ``check`` (against the SIMT interpreter) with nothing above a note."""

from __future__ import annotations

import re

import pytest

from cuda2nki.binding import binding_from_dict
from cuda2nki.diagnostics import Severity
from cuda2nki.fidelity.check import check
from cuda2nki.pipeline import port_file


def _params(n: int, **tensors: tuple) -> dict:
    out: dict = {
        name: {"shape": shape, "dtype": dtype, "role": role}
        for name, (shape, dtype, role) in tensors.items()
    }
    out["n"] = n
    return out


GUARDED_BOX = """
struct Box { float w, h; };
__global__ void k(const Box* b, const int* keep, float* area, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    area[i] = keep[i] ? b[i].w * b[i].h : -1.0f;
}
"""
GUARDED_VEC3 = """
struct Pt { float3 v; int on; };
__global__ void k(const Pt* p, float* r, int n) {
    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < n; t += blockDim.x * gridDim.x) {
        r[t] = p[t].on > 0 ? p[t].v.x + p[t].v.z : 0.0f;
    }
}
"""
BRANCH_TRIPLE = """
struct Q { float a, b, c; };
__global__ void k(const Q* q, const int* m, float* out, int n) {
    int j = threadIdx.x + blockDim.x * blockIdx.x;
    if (j < n) {
        if (m[j] != 0) out[j] = q[j].b / q[j].a;
        else out[j] = q[j].c;
    }
}
"""
MEMBER_SUM = """
struct Taps { float c[3]; int id; };
__global__ void k(const Taps* taps, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int q = 0; q < 3; q++) s += taps[i].c[q];
        out[i] = s * 0.5f + (float)taps[i].id;
    }
}
"""
MEMBER_MAX = """
#define W 6
struct Row { float v[W]; };
__global__ void k(const Row* rows, float* top, int n) {
    int r = blockDim.x * blockIdx.x + threadIdx.x;
    if (r >= n) return;
    float m = -1e30f;
    for (int e = 0; e < W; ++e) m = fmaxf(m, rows[r].v[e]);
    top[r] = m;
}
"""
MEMBER_INPLACE = """
typedef struct { float w[2]; } Pair;
__global__ void k(Pair* pairs, const float* g, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n) {
        float s = 0.0f;
        for (int q = 0; q < 2; ++q) s += pairs[j].w[q];
        pairs[j].w[1] = s * g[j];
    }
}
"""
WHOLE_RECORDS = """
__global__ void k(const float* src, float* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        for (int c = 0; c < 3; ++c) dst[i * 3 + c] = 2.0f * src[i * 3 + c] + 1.0f;
    }
}
"""

F32, I32 = "float32", "int32"
CASES = [
    (
        "guarded_box",
        GUARDED_BOX,
        128,
        "b",
        _params(1000, b=(["n", 2], F32, "in"), keep=(["n"], I32, "in"), area=(["n"], F32, "out")),
    ),
    (
        "guarded_vec3",
        GUARDED_VEC3,
        256,
        "p_v",
        _params(1000, p_v=(["n", 3], F32, "in"), p_on=(["n"], I32, "in"), r=(["n"], F32, "out")),
    ),
    (
        "branch_triple",
        BRANCH_TRIPLE,
        64,
        "q",
        _params(1000, q=(["n", 3], F32, "in"), m=(["n"], I32, "in"), out=(["n"], F32, "out")),
    ),
    (
        "member_sum",
        MEMBER_SUM,
        128,
        "taps_c",
        _params(
            1000, taps_c=(["n", 3], F32, "in"), taps_id=(["n"], I32, "in"), out=(["n"], F32, "out")
        ),
    ),
    (
        "member_max",
        MEMBER_MAX,
        96,
        "rows",
        _params(1000, rows=(["n", 6], F32, "in"), top=(["n"], F32, "out")),
    ),
    (
        "member_inplace",
        MEMBER_INPLACE,
        64,
        "pairs_w",
        _params(1000, pairs_w=(["n", 2], F32, "inout"), g=(["n"], F32, "in")),
    ),
    (
        "whole_records",
        WHOLE_RECORDS,
        128,
        "src",
        _params(1000, src=(["n", 3], F32, "in"), dst=(["n", 3], F32, "out")),
    ),
]


def _bind(block: int, params: dict) -> dict:
    return {
        "launch": {"grid": [f"ceil_div(n, {block})"], "block": [block]},
        "params": params,
        "check": {"rtol": 1e-5, "atol": 1e-5, "shapes": [{"n": 1000}, {"n": 129}, {"n": 31}]},
    }


@pytest.mark.parametrize(
    ("name", "src", "block", "records", "params"), CASES, ids=[c[0] for c in CASES]
)
def test_records_move_in_tiles_of_many_records(name, src, block, records, params, tmp_path) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    binding = binding_from_dict({"kernel": "k", **_bind(block, params)}, path=str(cu))
    res = port_file(cu, binding=binding)
    assert res.source is not None and not res.literal, [d.message for d in res.diagnostics]
    # one DMA of whole records per tile (a strided view of every record of the tile), never
    # one record per partition row
    loads = re.findall(rf"dma_copy\(dst=\w+, src={records}\b[^\n]*", res.source)
    assert loads and all(".ap(pattern=[[" in ld and ", [1, " in ld for ld in loads), loads
    assert "f_size" in res.source
    port = tmp_path / f"{name}.py"
    port.write_text(res.source)
    rep = check(cu, port, binding=binding, kernel="k", seeds=1)  # against the SIMT interpreter
    above = [f"{d.code} {d.message}" for d in rep.findings if d.severity != Severity.NOTE]
    assert rep.verdict == "pass" and not above, above
