"""Data-dependent addresses in the literal lowering: gathers (indirect DMA loads, one per thread
column) and atomicAdd/atomicSub at addresses read from data (histograms, scatter-adds: scatter
read-modify-write DMAs that accumulate repeated addresses), each spelled several ways and checked
against the SIMT interpreter on both targets."""

from __future__ import annotations

import pytest

from tests.port.test_literal import _kernel, _matches

_HIST = (
    'bins = {{ shape = ["nbins"], dtype = "int32", role = "inout" }}\n'
    'keys = {{ shape = ["n"], dtype = "int32", role = "in", range = [{lo}, "nbins + 2"] }}\n'
    "n = 700\nnbins = 37"
)
_HIST_SHAPES = ["n = 129\nnbins = 1", "n = 33\nnbins = 300"]

HISTOGRAMS = {
    "pointer_arith_guarded": """
__global__ void hist(int* bins, const int* keys, int n, int nbins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int v = keys[i];
        if (v >= 0 && v < nbins) atomicAdd(bins + v, 1);
    }
}
""",
    "address_of_grid_stride": """
__global__ void hist(int* bins, const int* keys, int n, int nbins) {
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += blockDim.x * gridDim.x) {
        int key = keys[k];
        bool ok = key >= 0 && key < nbins;
        if (ok) atomicAdd(&bins[key], 1);
    }
}
""",
    "early_return_pointer_local": """
__global__ void hist(int* bins, const int* keys, int n, int nbins) {
    int tid = threadIdx.x + blockDim.x * blockIdx.x;
    if (tid >= n) return;
    int b = keys[tid];
    if (!(b >= 0 && b < nbins)) return;
    int* slot = bins + b;
    atomicAdd(slot, 2);
    atomicSub(&slot[0], 1);
}
""",
    "shared_privatised": """
__global__ void hist(int* bins, const int* keys, int n, int nbins) {
    extern __shared__ int local[];
    for (int b = threadIdx.x; b < nbins; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        int k = keys[i];
        if (k >= 0 && k < nbins) atomicAdd(&local[k], 1);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < nbins; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}
""",
}


@pytest.mark.parametrize("name", sorted(HISTOGRAMS))
def test_histograms_at_addresses_read_from_data(tmp_path, name):
    src = HISTOGRAMS[name]
    shared = "shared" in name
    grid, block = ("4", "96") if shared else ('"ceil_div(n, 64)"', "64")
    params = _HIST.format(lo=-2)
    cu = _kernel(tmp_path, src, "hist", grid, block, params, _HIST_SHAPES)
    if shared:
        text = cu.with_suffix(".toml").read_text()
        cu.with_suffix(".toml").write_text(
            text.replace("block = [96]", 'block = [96]\nshared_bytes = "nbins * 4"')
        )
    _matches(cu, tmp_path)


def test_float_scatter_add_of_rows_by_token_id(tmp_path):
    """Embedding backward, 2-D block: threadIdx.y picks the token, x the column."""
    src = """
__global__ void emb_bwd(float* table, const float* grad, const int* ids, int T, int C, int V) {
    int t = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= T || c >= C) return;
    int row = ids[t];
    if (row < 0 || row >= V) return;
    atomicAdd(table + row * C + c, grad[t * C + c]);
}
"""
    params = (
        'table = { shape = ["V", "C"], dtype = "float32", role = "inout" }\n'
        'grad = { shape = ["T", "C"], dtype = "float32", role = "in" }\n'
        'ids = { shape = ["T"], dtype = "int32", role = "in", range = [-1, "V + 1"] }\n'
        "T = 70\nC = 20\nV = 9"
    )
    cu = _kernel(tmp_path, src, "emb_bwd", '"ceil_div(C, 16)", "ceil_div(T, 8)"', "16, 8",
                 params, ["T = 9\nC = 33\nV = 2", "T = 3\nC = 1\nV = 50"])  # fmt: skip
    _matches(cu, tmp_path)


GATHERS = {
    "index_load": """
__global__ void g(float* y, const float* x, const int* idx, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[idx[i]] * 2.0f;
}
""",
    "row_pointer_deref": """
__global__ void g(float* y, const float* x, const int* idx, int n, int m) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i >= n) return;
    const float* base = x + idx[i];
    y[i] = *base + base[0];
}
""",
    "shared_table": """
__global__ void g(float* y, const float* x, const int* idx, int n, int m) {
    __shared__ float tab[64];
    for (int k = threadIdx.x; k < 64; k += blockDim.x) tab[k] = k < m ? x[k] : 0.0f;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int j = idx[i];
        y[i] = j < 64 ? tab[j] : -1.0f;
    }
}
""",
}


@pytest.mark.parametrize("name", sorted(GATHERS))
def test_gathers_at_indices_read_from_data(tmp_path, name):
    params = (
        'y = { shape = ["n"], dtype = "float32", role = "out" }\n'
        'x = { shape = ["m"], dtype = "float32", role = "in" }\n'
        'idx = { shape = ["n"], dtype = "int32", role = "in", range = [0, "m"] }\n'
        "n = 300\nm = 50"
    )
    cu = _kernel(tmp_path, GATHERS[name], "g", '"ceil_div(n, 32)"', "32", params,
                 ["n = 33\nm = 1", "n = 5\nm = 200"])  # fmt: skip
    _matches(cu, tmp_path)


def test_gather_of_a_row_element_chosen_by_a_label(tmp_path):
    """The cross-entropy pattern: one thread per row reads logits[b, target[b]]."""
    src = """
__global__ void pick(float* out, const float* logits, const int* label, int B, int V) {
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < B) {
        const float* row = logits + b * V;
        out[b] = row[label[b]] - row[0];
    }
}
"""
    params = (
        'out = { shape = ["B"], dtype = "float32", role = "out" }\n'
        'logits = { shape = ["B", "V"], dtype = "float32", role = "in" }\n'
        'label = { shape = ["B"], dtype = "int32", role = "in", range = [0, "V"] }\n'
        "B = 100\nV = 17"
    )
    cu = _kernel(tmp_path, src, "pick", '"ceil_div(B, 32)"', "32", params,
                 ["B = 129\nV = 1", "B = 3\nV = 300"])  # fmt: skip
    _matches(cu, tmp_path)


def test_an_extremum_at_data_addresses_ports_thread_by_thread(tmp_path):
    src = (
        "__global__ void r(const float* x, float* y, int* c, int n) {\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) atomicMax(&c[(int)x[i]], i % 7 - 3);\n}\n"
    )
    cu = _kernel(tmp_path, src, "r", '"ceil_div(n, 32)"', "32",
                 'x = { shape = ["n"], dtype = "float32", role = "in", range = [0, 9.9] }\n'
                 'y = { shape = ["n"], dtype = "float32", role = "out" }\n'
                 'c = { shape = ["n"], dtype = "int32", role = "out" }\nn = 64',
                 ["n = 40"])  # fmt: skip
    _matches(cu, tmp_path)
