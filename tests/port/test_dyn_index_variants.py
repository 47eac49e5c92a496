"""Data-dependent indices ported through the recognised path: a gather along a row that a
reduction already streams (cross-entropy's ``x[i, t[i]]`` beside the row's logsumexp) is a
one-hot selection on chip (pass ``one-hot-gather``).  Each spelling lifts to intent the
evaluator matches with NumPy, and its port matches the SIMT interpreter on both targets, on
shapes that are not multiples of 128."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.port.acceptance import port_variant

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lift"))
from variants import _b, assert_lifts_to_meaning, t  # noqa: E402

I32 = "int32"


def _xent(a, s) -> dict:
    x, lab = a["x"], a["lab"]
    m = x.max(axis=1, keepdims=True)
    lse = np.log(np.exp(x - m).sum(axis=1)) + m[:, 0]
    return {"loss": lse - x[np.arange(x.shape[0]), lab]}


def _xent_binding(block: int, rows: str, cols: str) -> dict:
    return _b(
        {"grid": [f"ceil_div({rows}, {block})"], "block": [block]},
        {
            "x": t([rows, cols], "in"),
            "lab": t([rows], "in", I32, range=[0, cols]),
            "loss": t([rows], "out"),
            rows: 130,
            cols: 77,
        },
        [{rows: 33, cols: 300}, {rows: 257, cols: 5}],
    )


#: (id, source, binding, idiom, meaning)
GATHER_VARIANTS = [
    (
        "gather/xent_early_return",
        """
__global__ void k(const float* x, const int* lab, float* loss, int R, int C) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= R) return;
    float m = x[r * C];
    for (int c = 1; c < C; c++) m = fmaxf(m, x[r * C + c]);
    float s = 0.0f;
    for (int c = 0; c < C; c++) s += expf(x[r * C + c] - m);
    loss[r] = logf(s) + m - x[r * C + lab[r]];
}""",
        _xent_binding(64, "R", "C"),
        "gather",
        _xent,
    ),
    (
        "gather/nll_picked_first",
        """
__global__ void k(const float* x, const int* lab, float* loss, int rows, int cols) {
    int i = threadIdx.x + blockDim.x * blockIdx.x;
    if (i < rows) {
        const float* xr = x + i * cols;
        float picked = xr[lab[i]];
        float mx = xr[0];
        for (int j = 1; j < cols; ++j) mx = xr[j] > mx ? xr[j] : mx;
        float z = 0.0f;
        for (int j = 0; j < cols; ++j) z += __expf(xr[j] - mx);
        loss[i] = -(picked - mx - logf(z));
    }
}""",
        _xent_binding(128, "rows", "cols"),
        "gather",
        _xent,
    ),
    (
        "gather/xent_label_local",
        """
__global__ void k(const float* x, const int* lab, float* loss, int n, int v) {
    int row = blockIdx.x * 32 + threadIdx.x;
    if (!(row < n)) return;
    int y = lab[row];
    float best = -3.0e38f;
    for (int c = 0; c < v; ++c) best = fmaxf(best, x[row * v + c]);
    float acc = 0.0f;
    for (int c = 0; c < v; ++c) acc += expf(x[row * v + c] - best);
    float target_logit = x[row * v + y];
    loss[row] = logf(acc) - (target_logit - best);
}""",
        _xent_binding(32, "n", "v"),
        "gather",
        _xent,
    ),
]


@pytest.mark.parametrize(
    ("vid", "src", "bdict", "idiom", "meaning"),
    GATHER_VARIANTS,
    ids=[v[0] for v in GATHER_VARIANTS],
)
def test_lifts_to_meaning(vid, src, bdict, idiom, meaning) -> None:
    assert_lifts_to_meaning(vid, src, bdict, idiom, meaning, seed0=11)


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    ("vid", "src", "bdict"), [v[:3] for v in GATHER_VARIANTS], ids=[v[0] for v in GATHER_VARIANTS]
)
def test_row_gather_ports_as_one_hot_selection(vid, src, bdict, target, tmp_path) -> None:
    res, run, points = port_variant(vid, src, bdict, target, tmp_path, tol=1e-5, seed0=5)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    assert "iota" in res.source and "indirect" not in res.source.lower()


def _hist(keys: str, bins: str, weights: str | None = None):
    def meaning(a, s) -> dict:
        h = a[bins].astype(np.float64).copy()
        k = a[keys].astype(np.int64)
        w = np.ones(k.shape) if weights is None else a[weights]
        ok = (k >= 0) & (k < h.shape[0])
        np.add.at(h, k[ok], w[ok])
        return {bins: h}

    return meaning


def _rows(ids: str, table: str, src: str, scale: float = 1.0):
    def meaning(a, s) -> dict:
        tab = a[table].astype(np.float64).copy()
        k = a[ids].astype(np.int64)
        ok = (k >= 0) & (k < tab.shape[0])
        np.add.at(tab, k[ok], scale * a[src].reshape(k.size, -1)[ok])
        return {table: tab}

    return meaning


#: scatter-adds at an index read from data: histograms and rows added into a table
SCATTER_VARIANTS = [
    (
        "scatter/weighted_float_hist",
        """
__global__ void k(const int* keys, const float* w, float* h, int n, int nb) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int b = keys[i];
        if (b >= 0 && b < nb) atomicAdd(&h[b], w[i]);
    }
}""",
        _b(
            {"grid": ["ceil_div(n, 256)"], "block": [256]},
            {
                "keys": t(["n"], "in", I32, range=[-3, "nb + 2"]),
                "w": t(["n"], "in"),
                "h": t(["nb"], "inout"),
                "n": 1000,
                "nb": 37,
            },
            [{"n": 129, "nb": 200}, {"n": 3000, "nb": 5}],
        ),
        "scatter",
        _hist("keys", "h", "w"),
    ),
    (
        "scatter/grid_stride_counts",
        """
__global__ void k(int* hist, const int* key, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(hist + key[i], 1);
}""",
        _b(
            {"grid": [4], "block": [128]},
            {
                "hist": t(["nb"], "inout", I32),
                "key": t(["n"], "in", I32, range=[0, "nb"]),
                "n": 700,
                "nb": 10,
            },
            [{"n": 2049, "nb": 129}, {"n": 1, "nb": 3}],
        ),
        "scatter",
        _hist("key", "hist"),
    ),
    (
        "scatter/early_returns",
        """
__global__ void k(const int* keys, unsigned int* counts, int n, int nb) {
    int t = threadIdx.x + blockDim.x * blockIdx.x;
    if (t >= n) return;
    int q = keys[t];
    if (q < 0 || q >= nb) return;
    atomicAdd(&counts[q], 1u);
}""",
        _b(
            {"grid": ["ceil_div(n, 64)"], "block": [64]},
            {
                "keys": t(["n"], "in", I32, range=[-5, "nb + 5"]),
                "counts": t(["nb"], "inout", "uint32"),
                "n": 500,
                "nb": 16,
            },
            [{"n": 130, "nb": 300}, {"n": 1025, "nb": 1}],
        ),
        "scatter",
        _hist("keys", "counts"),
    ),
    (
        "scatter/rows_2d_grid",
        """
__global__ void k(float* tab, const float* g, const int* idx, int T, int C, int V) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y;
    if (c < C) {
        int row = idx[r];
        if (row >= 0 && row < V) atomicAdd(&tab[row * C + c], g[r * C + c]);
    }
}""",
        _b(
            {"grid": ["ceil_div(C, 32)", "T"], "block": [32]},
            {
                "tab": t(["V", "C"], "inout"),
                "g": t(["T", "C"], "in"),
                "idx": t(["T"], "in", I32, range=[-1, "V"]),
                "T": 100,
                "C": 40,
                "V": 7,
            },
            [{"T": 300, "C": 3, "V": 150}, {"T": 129, "C": 65, "V": 1}],
        ),
        "scatter",
        _rows("idx", "tab", "g"),
    ),
    (
        "scatter/index_add_scaled",
        """
__global__ void k(const float* src, const int* rows, float* out, int R, int D, int V) {
    int e = blockIdx.x * 128 + threadIdx.x;
    if (e < R * D) {
        int r = e / D, d = e % D;
        atomicAdd(out + rows[r] * D + d, 0.5f * src[e]);
    }
}""",
        _b(
            {"grid": ["ceil_div(R * D, 128)"], "block": [128]},
            {
                "src": t(["R", "D"], "in"),
                "rows": t(["R"], "in", I32, range=[0, "V"]),
                "out": t(["V", "D"], "inout"),
                "R": 50,
                "D": 16,
                "V": 9,
            },
            [{"R": 257, "D": 5, "V": 130}, {"R": 7, "D": 33, "V": 2}],
        ),
        "scatter",
        _rows("rows", "out", "src", 0.5),
    ),
]


#: histograms privatised in shared memory, merged into the global one with atomics
SCATTER_VARIANTS += [
    (
        "scatter/shared_static_bins",
        """
__global__ void k(const int* keys, unsigned int* hist, int n) {
    __shared__ unsigned int s[64];
    s[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * 64 + threadIdx.x;
    if (i < n) atomicAdd(&s[keys[i]], 1u);
    __syncthreads();
    atomicAdd(&hist[threadIdx.x], s[threadIdx.x]);
}""",
        _b(
            {"grid": ["ceil_div(n, 64)"], "block": [64]},
            {
                "keys": t(["n"], "in", I32, range=[0, 64]),
                "hist": t([64], "inout", "uint32"),
                "n": 1000,
            },
            [{"n": 129}, {"n": 5}],
        ),
        "scatter",
        _hist("keys", "hist"),
    ),
    (
        "scatter/shared_weighted_grid_stride",
        """
__global__ void k(const int* k_, const float* w, float* h, int n, int nb) {
    extern __shared__ float sh[];
    for (int b = threadIdx.x; b < nb; b += blockDim.x) sh[b] = 0.0f;
    __syncthreads();
    for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(sh + k_[i], w[i]);
    __syncthreads();
    for (int b = threadIdx.x; b < nb; b += blockDim.x) atomicAdd(h + b, sh[b]);
}""",
        _b(
            {"grid": [3], "block": [128], "shared_bytes": "nb * 4"},
            {
                "k_": t(["n"], "in", I32, range=[0, "nb"]),
                "w": t(["n"], "in"),
                "h": t(["nb"], "inout"),
                "n": 2000,
                "nb": 50,
            },
            [{"n": 131, "nb": 300}, {"n": 777, "nb": 1}],
        ),
        "scatter",
        _hist("k_", "h", "w"),
    ),
    (
        "scatter/shared_nonzero_merge",
        """
__global__ void k(const int* data, int* out, int count) {
    __shared__ int bins[128];
    int t = threadIdx.x;
    bins[t] = 0;
    __syncthreads();
    int g = blockIdx.x * blockDim.x + t;
    if (g < count) atomicAdd(bins + data[g], 1);
    __syncthreads();
    int c = bins[t];
    if (c > 0) atomicAdd(out + t, c);
}""",
        _b(
            {"grid": ["ceil_div(count, 128)"], "block": [128]},
            {
                "data": t(["count"], "in", I32, range=[0, 128]),
                "out": t([128], "inout", I32),
                "count": 3000,
            },
            [{"count": 130}, {"count": 1}],
        ),
        "scatter",
        _hist("data", "out"),
    ),
]


@pytest.mark.parametrize(
    ("vid", "src", "bdict", "idiom", "meaning"),
    SCATTER_VARIANTS,
    ids=[v[0] for v in SCATTER_VARIANTS],
)
def test_scatter_lifts_to_meaning(vid, src, bdict, idiom, meaning) -> None:
    assert_lifts_to_meaning(vid, src, bdict, idiom, meaning, seed0=21)


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    ("vid", "src", "bdict"),
    [v[:3] for v in SCATTER_VARIANTS],
    ids=[v[0] for v in SCATTER_VARIANTS],
)
def test_scatter_ports_as_one_hot_contraction(vid, src, bdict, target, tmp_path) -> None:
    res, run, points = port_variant(vid, src, bdict, target, tmp_path, tol=1e-4, seed0=5)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    assert "iota" in res.source and "matmul" in res.source


@pytest.mark.parametrize("target", ["nki", "legacy"])
def test_integer_counts_flush_exact_groups(target, tmp_path, monkeypatch) -> None:
    """Integer counts are summed in PSUM in chunks that stay below 2**24, each chunk added into
    an int32 accumulator; with chunks of three element columns the boundaries are exercised on
    small shapes (2049 keys: full chunks, a chunk of fewer rows and a tail)."""
    from cuda2nki.passes import _scatter

    monkeypatch.setattr(_scatter, "EXACT", 3 * 128 + 1)
    vid, src, bdict = next(v[:3] for v in SCATTER_VARIANTS if v[0].endswith("grid_stride_counts"))
    res, run, points = port_variant(vid, src, bdict, target, tmp_path, tol=0.0, seed0=5)
    assert not run.mismatches, run.mismatches
    assert "min(3, " in res.source  # chunks of at most three columns of 128 keys


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize(
    "vid", ["scatter/grid_stride_counts", "scatter/weighted_float_hist", "scatter/early_returns"]
)
def test_histogram_chunks_load_each_key_once(vid, target, tmp_path, monkeypatch) -> None:
    """A 1-D scatter-add takes its elements in resident [rows, F] chunks (one DMA each, before
    the loops over bins) and counts along the free axis; small chunk, pass and block sizes
    exercise every part (full chunks, a chunk of fewer rows, a tail down the partitions) and
    several passes and blocks of bins."""
    from cuda2nki.passes import _scatter_counts as sc

    monkeypatch.setattr(sc, "COLS_PER_CHUNK", 2)
    monkeypatch.setattr(sc, "BINS_PER_PASS", 64)
    monkeypatch.setattr(sc, "BINS_PER_BLOCK", 16)
    src, bdict = next(v[1:3] for v in SCATTER_VARIANTS if v[0] == vid)
    bdict = {**bdict, "check": {"shapes": [{"n": 2049, "nb": 129}, {"n": 700, "nb": 3}]}}
    res, run, points = port_variant(vid, src, bdict, target, tmp_path, tol=1e-4, seed0=7)
    assert len(points) == 3 and not run.mismatches, run.mismatches
    keys = next(n for n in ("keys", "key") if f"{n}[" in res.source)
    loads = [ln for ln in res.source.splitlines() if f"{keys}[" in ln and "out" not in ln]
    assert len(loads) == 3, loads  # one per chunk kind, none inside the bins' loops
    # the columns of a chunk: one element tile each
    assert re.search(r"for f\d* in [\w.]*range\(1, ", res.source), res.source


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("vid", ["scatter/rows_2d_grid", "scatter/index_add_scaled"])
def test_row_scatter_builds_each_one_hot_once_per_row_block(
    vid, target, tmp_path, monkeypatch
) -> None:
    """A scatter of rows into a float table takes its keys in resident chunks (one DMA each,
    before the loop over column banks) and accumulates every bank of a row block in one SBUF
    total; small chunk, bank and group sizes exercise every part and several banks and groups."""
    from cuda2nki.passes import _scatter_counts as sc
    from cuda2nki.passes import _scatter_rows as sr

    monkeypatch.setattr(sc, "COLS_PER_CHUNK", 2)
    monkeypatch.setattr(sr, "COLS_PER_BANK", 8)
    monkeypatch.setattr(sr, "COLS_PER_GROUP", 16)
    src, bdict = next(v[1:3] for v in SCATTER_VARIANTS if v[0] == vid)
    res, run, points = port_variant(vid, src, bdict, target, tmp_path, tol=1e-4, seed0=9)
    assert len(points) >= 3 and not run.mismatches, run.mismatches
    keys = next(n for n in ("idx", "rows") if f"{n}[" in res.source)
    loads = [ln for ln in res.source.splitlines() if f"{keys}[" in ln]
    assert len(loads) == 3, loads  # one per chunk kind, none inside the loop over banks
    assert re.search(r"for f\d* in [\w.]*range\(1, ", res.source), res.source
