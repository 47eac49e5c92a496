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
