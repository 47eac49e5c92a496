"""Arrays updated through index data by atomic functions only (:mod:`cuda2nki.lift.dataindex`):
``atomicAdd(&y[col[j]], v[j])`` gives the same result whatever order the threads run in, so
the array is sized by the values the binding chooses for the index data, as a read would be.
A plain store or compound assignment through index data (a scatter whose result depends on the
order) leaves the array unsized."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.dataindex import DATA_VALUES
from cuda2nki.lift.infer import binding_from_inference, infer_binding

V = DATA_VALUES

#: kernel source -> (the array updated, its shape, the index input)
ATOMIC = {
    "float-add-at-a-column": (
        """
__global__ void k(const int* col, const float* val, float* y, int nnz) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < nnz) atomicAdd(&y[col[j]], val[j]);
}
void go(const int* c, const float* v, float* y, int nnz) { k<<<(nnz + 127) / 128, 128>>>(c, v, y, nnz); }
""",
        "y",
        [V],
        "col",
    ),
    "count-through-pointer-sum-grid-stride": (
        """
__global__ void k(const unsigned* key, int* hits, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(hits + key[i], 1);
}
void go(const unsigned* k, int* h, int n) { k<<<32, 256>>>(k, h, n); }
""",
        "hits",
        [V],
        "key",
    ),
    "max-into-a-row-through-a-local": (
        """
__global__ void k(const int* group, const int* score, int* best, int n) {
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i >= n) return;
    int g = group[i];
    for (int c = 0; c < 4; ++c) atomicMax(&best[g * 4 + c], score[i * 4 + c]);
}
void go(const int* g, const int* s, int* b, int n) { k<<<(n + 63) / 64, 64>>>(g, s, b, n); }
""",
        "best",
        [V, 4],
        "group",
    ),
}


@pytest.mark.parametrize("spelling", sorted(ATOMIC))
def test_an_array_updated_atomically_through_data_is_sized(spelling: str) -> None:
    src, target, shape, data = ATOMIC[spelling]
    tu = parse_source(src, "a.cu")
    bnd, diags = binding_from_inference(tu, "k")
    assert bnd is not None, [d.message for d in diags]
    params = infer_binding(tu, "k")[0]["params"]
    assert params[target]["shape"] == shape and params[target]["role"] == "inout", params
    assert params[data]["range"] == [0, V], params[data]


#: an update through index data that is not atomic (or not only)
PLAIN = {
    "compound-assignment": "y[col[j]] += val[j];",
    "store": "y[col[j]] = val[j];",
    "atomic-beside-a-store": "atomicAdd(&y[col[j]], val[j]); y[col[j] + 1] = 0.0f;",
}


@pytest.mark.parametrize("spelling", sorted(PLAIN))
def test_a_plain_scatter_through_data_stays_unsized(spelling: str) -> None:
    src = f"""
__global__ void k(const int* col, const float* val, float* y, int nnz) {{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < nnz) {{ {PLAIN[spelling]} }}
}}
void go(const int* c, const float* v, float* y, int nnz) {{ k<<<(nnz + 127) / 128, 128>>>(c, v, y, nnz); }}
"""
    params = infer_binding(parse_source(src, "p.cu"), "k")[0]["params"]
    assert "shape" not in params["y"], params["y"]


#: a local assigned only loads of one index input, in a loop (declared without a value)
CARRIED = {
    "row-of-a-fibre-in-a-grid-stride-loop": """
__global__ void k(const int* slot, const int* ptr, const float* w, float* acc, int fibers, int R) {
    int f0 = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int row;
    float t = 0.0f;
    for (int f = f0; f < fibers; f += blockDim.x * gridDim.x) {
        row = slot[f];
        for (int x = ptr[f]; x < ptr[f + 1]; x++) t = t * 0.5f + w[x];
        for (int r = 0; r < R; r++) atomicAdd(&acc[row * R + r], t);
    }
}
void go(const int* s, const int* p, const float* w, float* a, int n, int R) {
    k<<<8, 128>>>(s, p, w, a, n, R);
}
""",
    "reassigned-under-a-branch": """
__global__ void k(const int* slot, const int* ptr, const float* w, float* acc, int fibers, int R) {
    int f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= fibers) return;
    int row = slot[f];
    float t = 0.0f;
    for (int x = ptr[f]; x < ptr[f + 1]; x++) {
        t = t * 0.5f + w[x];
        if (t > 1.0f) row = slot[x];
    }
    for (int r = 0; r < R; r++) atomicAdd(&acc[row * R + r], t);
}
void go(const int* s, const int* p, const float* w, float* a, int n, int R) {
    k<<<(n + 127) / 128, 128>>>(s, p, w, a, n, R);
}
""",
}


@pytest.mark.parametrize("spelling", sorted(CARRIED))
def test_a_local_carrying_index_data_sizes_the_rows_it_picks(spelling: str) -> None:
    params = infer_binding(parse_source(CARRIED[spelling], "c.cu"), "k")[0]["params"]
    assert params["acc"]["shape"] == [V, "R"], params["acc"]
    assert params["slot"]["range"] == [0, V], params["slot"]


def test_a_local_of_two_inputs_carries_neither() -> None:
    src = CARRIED["reassigned-under-a-branch"].replace("row = slot[x]", "row = ptr[x]")
    params = infer_binding(parse_source(src, "c.cu"), "k")[0]["params"]
    assert "shape" not in params["acc"], params["acc"]
