"""A host size computed as the product of two others (``total = rows * cols``) follows its
factors when host sizes too large to simulate are shrunk to test sizes: an index split into a
row and a column by the factors stays inside the tensors the product sizes (it used to be
halved alone, the factors kept at the host's values, and the CUDA kernel read out of bounds at
the check's sizes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuda2nki.lift.sizeproducts import products
from tests.lift.test_shrink_ties import _chosen

SOURCES = {
    # a flat walk over rows * cols elements, row and column tables sized by the factors
    "flat_rows_long_total": (
        """
__global__ void edge(const float* img, const int* up, const int* left, float* out,
                     long total, int rows, int cols) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < total) {
        int r = e % rows;
        int c = e / rows;
        out[e] = img[up[r] + rows * c] - img[r + rows * left[c]];
    }
}
int main(int argc, char** argv) {
    int rows = 1024, cols = 1024;
    long total = rows * cols;
    float *img, *out; int *up, *left;
    cudaMalloc((void**)&img, sizeof(float) * total);
    cudaMalloc((void**)&out, sizeof(float) * total);
    cudaMalloc((void**)&up, sizeof(int) * rows);
    cudaMalloc((void**)&left, sizeof(int) * cols);
    edge<<<(total + 255) / 256, 256>>>(img, up, left, out, total, rows, cols);
    return 0;
}
""",
        ("total", "rows", "cols"),
    ),
    # unequal factors, the product computed in a separate statement, a 128-thread block
    "unequal_factors": (
        """
__global__ void colscale(float* a, const float* s, const float* t, int count, int h, int w) {
    int k = threadIdx.x + blockIdx.x * 128;
    if (k >= count) return;
    a[k] = a[k] * s[k / h] + t[k % h];
}
void run() {
    int h = 2048;
    int w = 512;
    int count;
    count = h * w;
    float *a, *s, *t;
    cudaMalloc(&a, count * sizeof(float));
    cudaMalloc(&s, w * sizeof(float));
    cudaMalloc(&t, h * sizeof(float));
    colscale<<<(count + 127) / 128, 128>>>(a, s, t, count, h, w);
}
""",
        ("count", "h", "w"),
    ),
    # one size squared
    "square": (
        """
__global__ void diag(const float* m, float* d, int nn, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < nn && t % (n + 1) == 0) d[t / (n + 1)] = m[t];
}
int main() {
    int n = 2048;
    int nn = n * n;
    float *m, *d;
    cudaMalloc((void**)&m, sizeof(float) * nn);
    cudaMalloc((void**)&d, sizeof(float) * n);
    diag<<<(nn + 255) / 256, 256>>>(m, d, nn, n);
    return 0;
}
""",
        ("nn", "n", "n"),
    ),
}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_a_product_of_host_sizes_shrinks_with_its_factors(name: str, tmp_path: Path):
    src, (prod, a, b) = SOURCES[name]
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    got = _chosen(cu, 0)
    assert {prod, a, b} <= set(got), got
    assert int(got[prod]) == int(got[a]) * int(got[b]), got
    assert int(got[prod]) <= 1 << 16, got  # shrunk to a test size, not kept at the host's


def test_which_sizes_are_products():
    assert products({"total": 1 << 20, "rows": 1024, "cols": 1024}) == {"total": ("cols", "rows")}
    assert products({"nn": 4096, "n": 64}) == {"nn": ("n", "n")}
    # a factor of 1 relates nothing; unrelated sizes are no products
    assert products({"n": 4096, "one": 1, "m": 4096}) == {}
    assert products({"n": 5000, "m": 100}) == {}
