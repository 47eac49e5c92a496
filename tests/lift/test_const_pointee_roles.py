"""A pointer to ``const`` data is an input even where its reads sit where the analysis does not
look (a record read field by field in a helper, under a loop the lifter refuses), and the host's
``cudaMalloc(&p, n * sizeof(S))`` of a struct of the file counts the struct's real bytes (it was
taken as 4 bytes): the binding is complete and sized right, so the check reads inside it."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference

#: spelling -> (kernel, pointer, elements of its shape at the host's sizes, source)
CASES = {
    "typedef-record-helper-pointer": (
        "sum_poles",
        "poles",
        2 * 32,
        """
typedef struct { float re; float im; } Pole;
__device__ float energy(const Pole* p, int m, unsigned int key) {
    float e = 0.0f;
    while (key > 1) { const Pole* q = p + key % m; e += q->re * q->im; key = key / 5; }
    return e;
}
__global__ void sum_poles(float* __restrict__ out, const Pole* __restrict__ poles, int m, int total) {
    unsigned int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < total) out[t] = energy(poles, m, t * 13u + 7u);
}
int main() {
    int m = 32, total = 512;
    Pole* dp; float* dout;
    cudaMalloc(&dp, m * sizeof(Pole));
    cudaMalloc(&dout, total * sizeof(float));
    sum_poles<<<total / 128, 128>>>(dout, dp, m, total);
}
""",
    ),
    "mixed-struct-bytes": (
        "look",
        "wins",
        24 * 64,
        """
struct Window { double start; double end; int id; };
__device__ double hit(const Window* w, int count, unsigned long long seed) {
    double e = 0.0;
    for (unsigned long long s = seed; s > 1; s /= 3) e += w[s % count].end;
    return e;
}
__global__ void look(const Window* wins, double* res, int count, int n) {
    size_t i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < n) res[i] = hit(wins, count, 7 * i + 1);
}
int main() {
    int count = 64, n = 1000;
    Window* d_w; double* d_r;
    cudaMalloc((void**)&d_w, sizeof(Window) * count);
    cudaMalloc((void**)&d_r, sizeof(double) * n);
    look<<<(n + 255) / 256, 256>>>(d_w, d_r, count, n);
}
""",
    ),
    "struct-keyword-const-after": (
        "accumulate",
        "cells",
        16 * 100,
        """
struct Cell { int a; double b; };
__device__ double weigh(struct Cell const* cs, int k, int hops) {
    double s = 0.0;
    for (int h = hops; h > 0; h >>= 1) { struct Cell const* c = cs + (k * h) % 100; s += c->b; }
    return s;
}
__global__ void accumulate(double* totals, struct Cell const* cells, int rows) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) totals[r] = weigh(cells, r, r + 9);
}
void launch(double* totals, int rows) {
    struct Cell* d_cells;
    cudaMalloc((void**)&d_cells, 100 * sizeof(struct Cell));
    accumulate<<<(rows + 31) / 32, 32>>>(totals, d_cells, rows);
}
""",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_const_pointee_is_an_input_sized_by_its_allocation(case: str) -> None:
    kernel, name, elements, src = CASES[case]
    tu = parse_source(src, "k.cu")
    bnd, diags = binding_from_inference(tu, kernel)
    assert bnd is not None, [d.message for d in diags if d.severity.name != "NOTE"]
    assert bnd.tensor(name).role == "in"
    shape = bnd.resolve().shapes[name]
    n = 1
    for d in shape:
        n *= int(d)
    assert n == elements, shape
