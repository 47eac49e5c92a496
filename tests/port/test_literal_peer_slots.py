"""Slots taken at counters chosen by data (``atomicAdd`` whose old value is used, at an address
read from data) and plain stores at addresses read from data, in the literal lowering of the
current API: the block's addresses (and increments) are transposed into one row that every
partition sees, so that each thread finds on chip the peers before and after it in thread order
at its own address -- its old value is the gathered element plus the increments of the earlier
peers, and only the last writer at each address stores (one indirect DMA per thread column).
Ports match the SIMT interpreter whatever the spelling, and use a handful of DMAs per block
instead of two per thread."""

from __future__ import annotations

import pytest

from cuda2nki.binding import load_binding
from cuda2nki.codegen.suppress import DATA_ADDRESS, DATA_ADDRESS_IDS, comment
from cuda2nki.fidelity.check import check
from cuda2nki.pipeline import port_file
from tests.port.acceptance import run_against_simt
from tests.port.test_literal import ROOT, _kernel, _matches

_PARAMS = (
    'key = {{ shape = ["n"], dtype = "int32", role = "in", range = [{lo}, {hi}] }}\n'
    'fill = {{ shape = ["nb"], dtype = "int32", role = "{role}"{init} }}\n'
    'items = {{ shape = ["nb * 8"], dtype = "int32", role = "out" }}\n'
    "n = 300\nnb = 7"
)

KERNELS = {
    # a slot per key in the bucket its data chooses, keys below zero skipped
    "slot_per_key": """
__global__ void put(const int* key, int* fill, int* items, int n, int nb) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i >= n || key[i] < 0) return;
    int b = key[i] % nb;
    int at = atomicAdd(&fill[b], 1);
    if (at < 8) items[b * 8 + at] = i;
}
""",
    # per-thread increments that wrap around 2**31, taken back with atomicSub, through a
    # pointer moved by the key
    "wrapping_increments_and_sub": """
__global__ void put(const int* key, int* fill, int* items, int n, int nb) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int* counter = fill + (key[i] & 0x7fffffff) % nb;
        int got = atomicAdd(counter, key[i] * 65537);
        int back = atomicSub(counter, 3);
        items[(i * 5) % (nb * 8)] = got ^ back;
    }
}
""",
    # a grid-stride loop over the keys, the counter indexed by the bucket inline
    "grid_stride_inline_index": """
__global__ void put(const int* key, int* fill, int* items, int n, int nb) {
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += blockDim.x * gridDim.x) {
        int b = abs(key[k]) % nb;
        int slot = atomicAdd(fill + b, 2);
        if (slot < 16) items[b * 8 + slot / 2] = k;
    }
}
""",
}

_INIT = {
    "slot_per_key": ("out", "", -3, 60),
    "wrapping_increments_and_sub": (
        "inout",
        ", range = [-2000000000, 2000000000]",
        -(2**31) + 1,
        2**31 - 1,
    ),
    "grid_stride_inline_index": ("out", "", -40, 40),
}


def _bucket(tmp_path, name, block, grid=None):
    role, init, lo, hi = _INIT[name]
    params = _PARAMS.format(lo=lo, hi=hi, role=role, init=init)
    grid = grid or f'"ceil_div(n, {block})"'
    return _kernel(tmp_path, KERNELS[name], "put", grid, str(block), params,
                   ["n = 1\nnb = 3", "n = 257\nnb = 5"])  # fmt: skip


@pytest.mark.parametrize("block", [128, 256])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_slots_at_counters_chosen_by_data_match(tmp_path, name, block):
    _matches(_bucket(tmp_path, name, block), tmp_path)


def test_a_small_grid_stride_grid_and_a_block_too_large_for_peer_rows(tmp_path):
    """Two blocks of 64 passing the atomic several times each; a block of 512 threads (more
    than one row of peers holds) goes thread by thread and still matches."""
    _matches(_bucket(tmp_path, "grid_stride_inline_index", 64, grid="2"), tmp_path)
    big = tmp_path / "big"
    big.mkdir()
    _matches(_bucket(big, "slot_per_key", 512), big)


def test_a_two_dimensional_block_takes_slots_in_linear_thread_order(tmp_path):
    src = """
__global__ void put(const int* key, int* fill, int* items, int n, int nb) {
    int i = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    if (i < n) {
        int slot = atomicAdd(&fill[key[i] % nb], 1);
        items[(key[i] % nb) * 8 + slot % 8] = i;
    }
}
"""
    params = _PARAMS.format(lo=0, hi=30, role="out", init="")
    cu = _kernel(tmp_path, src, "put", '"ceil_div(n, 256)"', "32, 8", params,
                 ["n = 1\nnb = 3", "n = 300\nnb = 2"])  # fmt: skip
    _matches(cu, tmp_path)


def _dmas(rel):
    cu = ROOT / "corpus" / f"{rel}.cu"
    binding = load_binding(cu.with_suffix(".toml"))
    res = port_file(cu, binding=binding)
    return res, binding, cu


def test_the_corpus_bucketing_takes_a_handful_of_dmas_per_block(tmp_path):
    res, binding, cu = _dmas("misc/bucket_slots")
    assert res.literal and "_c2n_atomic_fetch_dyn(" in res.source
    port = tmp_path / "bucket_slots.py"
    port.write_text(res.source)
    rep = check(cu, port, binding=binding, kernel=res.kernel, seeds=1)
    assert rep.numerics_outcome == "pass", rep.numerics
    # 8 blocks of 128 keys at the first point: was two DMAs per thread and key (over 4,000)
    assert rep.trace["dma_count"] <= 8 * 6, rep.trace["dma_count"]
    codes = {d.code for d in rep.findings}
    assert not codes & {"C2N5001", "C2N5014"}, codes


def test_the_indirect_dmas_carry_their_explained_suppression(tmp_path):
    """Two of every three DMAs of a key are at addresses read from data (the counter taken and
    the slot written), one element per partition row whatever the tiling: the narrow-DMA finding
    is suppressed at those DMAs with the reason, and counted (C2N5013)."""
    res, binding, cu = _dmas("misc/bucket_slots")
    marker = "# " + comment(DATA_ADDRESS_IDS, DATA_ADDRESS)
    lines = res.source.splitlines()
    marked = [lines[i + 1].strip() for i, ln in enumerate(lines) if ln.strip() == marker]
    assert len(marked) == 3 and all(x.startswith("nisa.dma_copy(") for x in marked), marked
    port = tmp_path / "bucket_slots.py"
    port.write_text(res.source)
    rep = check(cu, port, binding=binding, kernel=res.kernel, seeds=1)
    assert rep.verdict == "pass" and rep.suppressed == 1, [d.code for d in rep.findings]
    why = [n for d in rep.findings if d.code == "C2N5013" for n in d.notes]
    assert any("C2N5007" in n and "addresses read from data" in n for n in why), why


def test_a_port_where_the_first_writer_wins_fails(tmp_path):
    """The on-chip scatter keeps the last writer in thread order: a port that keeps the first
    (earlier peers instead of later ones) is reported as a mismatch."""
    src = """
__global__ void pack(float* out, const int* at, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[at[i]] = x[i];
}
"""
    params = (
        'out = { shape = ["n"], dtype = "float32", role = "out" }\n'
        'at = { shape = ["n"], dtype = "int32", role = "in", range = [0, 6] }\n'
        'x = { shape = ["n"], dtype = "float32", role = "in" }\n'
        "n = 300"
    )
    cu = _kernel(tmp_path, src, "pack", '"ceil_div(n, 256)"', "256", params, ["n = 40"])
    binding = load_binding(cu.with_suffix(".toml"))
    res = port_file(cu, binding=binding, lowering="literal")
    good = tmp_path / "good.py"
    good.write_text(res.source)
    flawed = res.source.replace("_c2n_by_column(row, nl.equal, own)\n    later = nl.max("
                                "nl.multiply(same, _c2n_order(col, True)",
                                "_c2n_by_column(row, nl.equal, own)\n    later = nl.max("
                                "nl.multiply(same, _c2n_order(col, False)")  # fmt: skip
    assert flawed != res.source
    bad = tmp_path / "flawed.py"
    bad.write_text(flawed)
    points = binding.test_points()[:2]
    ok = run_against_simt(res, binding, good, points=points, rtol=0, atol=0, cost="overlapped_ns")
    assert not ok.mismatches
    run = run_against_simt(res, binding, bad, points=points, rtol=0, atol=0, cost="overlapped_ns")
    assert run.mismatches


def test_the_corpus_compaction_takes_a_handful_of_dmas_per_pass(tmp_path):
    """The block's shared counters are set by thread 0 (``if (threadIdx.x == 0) s_n = 0;``): the
    writer is known at trace time, so the store writes its value alone instead of reading and
    writing the element back for every thread."""
    res, binding, cu = _dmas("misc/compact_above")
    assert res.literal and "_c2n_atomic_fetch(" in res.source
    port = tmp_path / "compact_above.py"
    port.write_text(res.source)
    rep = check(cu, port, binding=binding, kernel=res.kernel, seeds=1)
    assert rep.numerics_outcome == "pass", rep.numerics
    # 24 passes of a 128-thread block at the first point: was over 13,000 DMAs
    assert rep.trace["dma_count"] <= 24 * 16, rep.trace["dma_count"]
