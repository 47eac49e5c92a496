"""A gather table that no allocation in the tree sizes (its launcher is called from nowhere the
source shows) gets a default number of rows of its row width, with a note, and the integer
input that picks its rows takes values among them; a scatter, or rows picked by a value the
check cannot choose, stays a TODO."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.gatherrows import DEFAULT_ROWS
from cuda2nki.lift.infer import binding_from_inference, infer_binding

#: kernel name, table, index input, row width, source
GATHERS = {
    "flat-div-mod": (
        "embed",
        "emb",
        "tok",
        "D",
        """
__global__ void embed(float* out, const int* tok, const float* emb, int N, int D) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N * D) {
        int r = tok[i / D];
        out[i] = emb[r * D + i % D];
    }
}
void run(float* o, const int* t, const float* e, int N, int D) {
    embed<<<(N * D + 127) / 128, 128>>>(o, t, e, N, D);
}""",
    ),
    "row-per-block-strided-loop": (
        "rows_of",
        "weights",
        "picks",
        "width",
        """
__global__ void rows_of(const long* picks, const float* weights, float* dst, int count, int width) {
    int b = blockIdx.x;
    if (b >= count) return;
    long w = picks[b];
    for (int c = threadIdx.x; c < width; c += blockDim.x)
        dst[b * width + c] = 2.0f * weights[w * width + c];
}
void launch(const long* p, const float* w, float* d, int count, int width) {
    rows_of<<<count, 64>>>(p, w, d, count, width);
}""",
    ),
    "lookup-table-cast-index": (
        "decode",
        "lut",
        "codes",
        1,
        """
__global__ void decode(float* y, const unsigned char* codes, const float* lut, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = lut[(int)codes[i]];
}
void go(float* y, const unsigned char* c, const float* l, int n) {
    decode<<<32, 256>>>(y, c, l, n);
}""",
    ),
}


@pytest.mark.parametrize("spelling", sorted(GATHERS))
def test_an_unallocated_gather_table_gets_default_rows(spelling: str) -> None:
    kernel, table, index, width, src = GATHERS[spelling]
    tu = parse_source(src, "g.cu")
    bnd, diags = binding_from_inference(tu, kernel)
    assert bnd is not None, [d.message for d in diags if d.severity.name != "NOTE"]
    want = [DEFAULT_ROWS] if width == 1 else [DEFAULT_ROWS, width]
    assert [d if isinstance(d, int) else str(d) for d in bnd.tensor(table).shape] == want
    assert bnd.tensor(table).role == "in"
    note = next(d for d in diags if f"'{table}' shape" in d.message)
    assert "a default" in note.message and f"'{index}'" in note.message
    spec = infer_binding(tu, kernel)[0]["params"][index]
    assert list(spec["range"]) == [0, DEFAULT_ROWS]  # the check picks rows inside the table


NOT_SIZED = {
    "scatter-store": """
__global__ void k(float* table, const int* slot, const float* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) table[slot[i]] = v[i];
}
void go(float* t, const int* s, const float* v, int n) { k<<<(n + 63) / 64, 64>>>(t, s, v, n); }""",
    "rows-picked-by-a-float": """
__global__ void k(float* out, const float* where, const float* table, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = table[(int)where[i] * 4 + 1];
}
void go(float* o, const float* w, const float* t, int n) { k<<<(n + 63) / 64, 64>>>(o, w, t, n); }""",
}


@pytest.mark.parametrize("spelling", sorted(NOT_SIZED))
def test_other_data_indexed_pointers_stay_unsized(spelling: str) -> None:
    tu = parse_source(NOT_SIZED[spelling], "g.cu")
    partial, diags = infer_binding(tu, "k")
    assert "shape" not in partial["params"]["table"]
    assert not any("a default: its rows" in d.message for d in diags)
