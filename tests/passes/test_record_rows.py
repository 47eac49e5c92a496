"""record-rows: the fields of a tile of records move in one DMA of the record rows, loads and
stores alike; stores are merged only where every field of the rows is written (a partial write
keeps its field stores, the other fields untouched); the ports stay correct on both targets."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki import api
from cuda2nki.ir.nodes import Load, Rows, Store, TensorCopy
from cuda2nki.rewrite import nodes

#: name -> (kernel, source, record tensors read, record tensors written)
KERNELS: dict[str, tuple[str, str, set[str], set[str]]] = {
    "pairs_in_shared": (
        "swap_pairs",
        """
typedef struct {
    float a, b;
} Pair;
__global__ void swap_pairs(Pair* dst, const Pair* src, int n) {
    __shared__ Pair stage[64];
    int t = threadIdx.x;
    int g = blockIdx.x * 64 + t;
    if (g < n) stage[t] = src[g];
    __syncthreads();
    if (g < n) {
        Pair p;
        p.a = stage[t].b;
        p.b = stage[t].a * 2.0f;
        dst[g] = p;
    }
}
void run(Pair* dst, const Pair* src, int n) { swap_pairs<<<(n + 63) / 64, 64>>>(dst, src, n); }
""",
        {"src"},
        {"dst"},
    ),
    "three_fields_by_reference": (
        "relax_springs",
        """
struct Spring {
    float stiff;
    float rest;
    float len;
};
__device__ void relax(Spring s, float rate, Spring& out) {
    out = s;
    out.len = s.len - rate * (s.len - s.rest);
}
__global__ void relax_springs(const Spring* in, Spring* out, float rate, int m) {
    int j = blockIdx.x * 256 + threadIdx.x;
    if (j < m) {
        Spring r;
        relax(in[j], rate, r);
        out[j] = r;
    }
}
void run(const Spring* in, Spring* out, float rate, int m) {
    relax_springs<<<(m + 255) / 256, 256>>>(in, out, rate, m);
}
""",
        {"in"},
        {"out"},
    ),
    "fields_read_under_a_select": (
        "nearest",
        """
typedef struct {
    float u, v;
} UV;
__device__ float reach(const UV* p, float u0) { return sqrtf(p->u * p->u + p->v * p->v) - u0; }
__global__ void nearest(const UV* pts, float* d, int count, float u0) {
    int k = blockDim.x * blockIdx.x + threadIdx.x;
    if (k < count) {
        const UV* p = &pts[k];
        d[k] = p->u > u0 ? p->v - u0 : reach(p, u0);
    }
}
void run(const UV* pts, float* d, int count, float u0) {
    nearest<<<(count + 127) / 128, 128>>>(pts, d, count, u0);
}
""",
        {"pts"},
        set(),
    ),
}

#: two of three fields written: the third keeps what the host put there
PARTIAL = """
struct Body3 {
    float x, y, w;
};
__global__ void nudge(Body3* b, int n, float dx) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        b[i].x = b[i].x + dx;
        b[i].y = b[i].y * b[i].w;
    }
}
void run(Body3* b, int n, float dx) { nudge<<<(n + 127) / 128, 128>>>(b, n, dx); }
"""


def _dmas(res, tensor: str) -> list:
    return [
        s
        for s in nodes(res.ir_tiles.body)
        if (isinstance(s, Load) and s.src.tensor == tensor)
        or (isinstance(s, Store) and s.dst.tensor == tensor)
    ]


def _port(tmp: Path, name: str, src: str, kernel: str, target: str = "nki"):
    cu = tmp / f"{name}.cu"
    cu.write_text(src)
    res = api.port(cu, kernel=kernel, api=target)
    assert res.source is not None and not res.literal, [d.message for d in res.diagnostics]
    return cu, res


@pytest.mark.parametrize("case", sorted(KERNELS))
def test_record_fields_move_as_rows(case: str, tmp_path: Path) -> None:
    kernel, src, ins, outs = KERNELS[case]
    _, res = _port(tmp_path, case, src, kernel)
    for tensor in ins | outs:
        dmas = _dmas(res, tensor)
        views = [d.src if isinstance(d, Load) else d.dst for d in dmas]
        assert dmas and all(isinstance(v.dims[0], Rows) for v in views), (tensor, views)


def test_a_partial_record_write_moves_whole_records(tmp_path: Path) -> None:
    """Two of three fields written in place: the third is carried over in the same tile of
    records (the copy of the written fields is dead), loaded and stored as whole records --
    an ``inout`` tensor's loads read its kernel-entry value."""
    _, res = _port(tmp_path, "partial", PARTIAL, "nudge")
    stores = [d for d in _dmas(res, "b") if isinstance(d, Store)]
    assert stores and all(isinstance(s.dst.dims[0], Rows) for s in stores)
    loads = [d for d in _dmas(res, "b") if isinstance(d, Load)]
    assert loads and all(isinstance(ld.src.dims[0], Rows) for ld in loads)
    assert len(loads) == len(stores) == 3  # full tiles, partial rows, the last row's tail


@pytest.mark.slow
@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("case", [*sorted(KERNELS), "partial"])
def test_record_ports_pass_check_on_both_targets(case: str, target: str, tmp_path: Path) -> None:
    kernel, src = (KERNELS[case][0], KERNELS[case][1]) if case in KERNELS else ("nudge", PARTIAL)
    cu, res = _port(tmp_path, case, src, kernel, target)
    port = tmp_path / f"{case}_{target}.py"
    port.write_text(res.source)
    rep = api.check(cu, port, kernel=kernel, seeds=1)
    above = [f"{d.code} {d.message}" for d in rep.findings if d.severity.name != "NOTE"]
    assert rep.verdict == "pass", [n for n in rep.numerics if n.get("classification")]
    if case != "partial":
        assert not above, above


def test_fields_read_under_a_select_fill_the_partitions(tmp_path: Path) -> None:
    """The select's branch reads a field of the record its condition reads: in bounds wherever
    the condition is, so the map is coalesced -- several records per partition, not one."""
    kernel, src, _, _ = KERNELS["fields_read_under_a_select"]
    _, res = _port(tmp_path, "select", src, kernel)
    loads = [d for d in _dmas(res, "pts") if isinstance(d, Load)]
    widths = {str(ld.src.dims[0].width) for ld in loads}
    assert loads and "Const(value=2)" not in widths, widths


def test_computed_fields_are_written_in_place(tmp_path: Path) -> None:
    """A field computed by an engine instruction is written straight into the record rows' tile;
    only a field passed through from the input is copied there (one per stored tile here)."""
    kernel, src, _, _ = KERNELS["pairs_in_shared"]
    _, res = _port(tmp_path, "pairs", src, kernel)
    stores = [d for d in _dmas(res, "dst") if isinstance(d, Store)]
    copies = [s for s in nodes(res.ir_tiles.body) if isinstance(s, TensorCopy)]
    assert stores and len(copies) == len(stores), (len(copies), len(stores))
