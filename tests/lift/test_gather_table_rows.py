"""A gather table the kernel reads a row at a time (``wte[tok[i] * C + c]``) takes its row count
from the host's allocation of ``V * C`` elements: ``[V, C]``, so that the check's index values
stay inside it, whatever the element type (bf16 tables included)."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference, infer_binding

#: a flat walk of (rows, C) picking table rows by token
FLAT = """
__global__ void embed(float* out, const int* tok, const float* wte, int N, int C) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N * C) {
        int r = i / C, c = i % C;
        out[i] = wte[tok[r] * C + c];
    }
}
int main() {
    int N = 64, C = 32, V = 1000;
    float *out, *wte; int* tok;
    cudaMalloc(&out, N * C * sizeof(float));
    cudaMalloc(&tok, N * sizeof(int));
    cudaMalloc(&wte, V * C * sizeof(float));
    embed<<<(N * C + 255) / 256, 256>>>(out, tok, wte, N, C);
    return 0;
}
"""

#: bf16 rows copied through a row pointer by a loop over the channels
BF16_ROWS = """
#include <cuda_bf16.h>
__global__ void pick_rows(__nv_bfloat16* dst, const int* ids, const __nv_bfloat16* table,
                          int rows, int width) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const __nv_bfloat16* src = table + ids[r] * width;
        for (int c = 0; c < width; c++) dst[r * width + c] = src[c];
    }
}
int main() {
    int rows = 100, width = 48;
    const int vocab = 5000;
    __nv_bfloat16 *dst, *table; int* ids;
    cudaMalloc((void**)&dst, rows * width * sizeof(__nv_bfloat16));
    cudaMalloc((void**)&ids, rows * sizeof(int));
    cudaMalloc((void**)&table, vocab * width * sizeof(__nv_bfloat16));
    pick_rows<<<(rows + 127) / 128, 128>>>(dst, ids, table, rows, width);
    return 0;
}
"""

#: a defined row count, a launcher in between, and rows offset by a position table
LAUNCHED = """
#define NUM_CLASSES 512
__global__ void add_embed(float* y, const int* cls, const float* emb, const float* pos,
                          int B, int T, int C) {
    int bt = blockIdx.x;
    int t = bt % T;
    for (int c = threadIdx.x; c < C; c += blockDim.x)
        y[bt * C + c] = emb[cls[bt] * C + c] + pos[t * C + c];
}
void launch(float* y, const int* cls, const float* emb, const float* pos, int B, int T, int C) {
    add_embed<<<B * T, 64>>>(y, cls, emb, pos, B, T, C);
}
int main() {
    int B = 2, T = 16, C = 96;
    float *y, *emb, *pos; int* cls;
    cudaMalloc(&y, B * T * C * sizeof(float));
    cudaMalloc(&cls, B * T * sizeof(int));
    cudaMalloc(&emb, NUM_CLASSES * C * sizeof(float));
    cudaMalloc(&pos, T * C * sizeof(float));
    launch(y, cls, emb, pos, B, T, C);
    return 0;
}
"""

CASES = {
    "flat": (FLAT, "embed", "wte", [1000, "C"], "tok"),
    "bf16-row-pointer": (BF16_ROWS, "pick_rows", "table", [5000, "width"], "ids"),
    "define-launcher": (LAUNCHED, "add_embed", "emb", [512, "C"], "cls"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_gather_table_takes_the_rows_the_host_allocates(name: str) -> None:
    src, kernel, table, shape, index = CASES[name]
    tu = parse_source(src, f"{name}.cu")
    partial, _ = infer_binding(tu, kernel)
    assert partial["params"][table]["shape"] == shape
    b, _ = binding_from_inference(tu, kernel)
    assert b is not None
    lo, hi = b.tensor(index).range or (None, None)
    assert lo == 0 and hi is not None and hi <= shape[0]
