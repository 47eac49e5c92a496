"""A launch that passes a copy of an allocated pointer (``float* table = base;``, ``view =
gmem;``, through ``void*``) has the allocation of the pointer it copies."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference

KERNEL = """
__global__ void lookup(const float* table, const int* keys, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * table[keys[i]];
}
"""

HOSTS = {
    "declared_copy": """
int main() {
    int n = 500; float *base, *out; int* keys;
    cudaMalloc((void**)&base, 90 * sizeof(float));
    cudaMalloc(&keys, n * sizeof(int)); cudaMalloc(&out, n * sizeof(float));
    float* table = base;
    lookup<<<(n + 127) / 128, 128>>>(table, keys, out, n);
    return 0;
}
""",
    "void_pointer_assigned": """
void run(int n) {
    void *gmem, *view;
    int* keys; float* out;
    cudaMalloc(&gmem, 45 * 2 * sizeof(float));
    cudaMalloc(&keys, n * sizeof(int)); cudaMalloc(&out, n * sizeof(float));
    view = gmem;
    lookup<<<(n + 63) / 64, 64>>>((float*)view, keys, out, n);
}
""",
    "chain_of_copies": """
#define ENTRIES 90
int main() {
    int n = 200; float *a, *out; int* keys;
    a = (float*)malloc(ENTRIES * sizeof(float));
    cudaMalloc(&keys, n * sizeof(int)); cudaMalloc(&out, n * sizeof(float));
    float* b = a;
    float* c;
    c = b;
    lookup<<<4, 64>>>(c, keys, out, n);
    return 0;
}
""",
}


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_a_copied_pointer_has_the_allocation_it_copies(host: str) -> None:
    tu = parse_source(KERNEL + HOSTS[host], "k.cu")
    bnd, diags = binding_from_inference(tu, "lookup")
    assert bnd is not None, [d.message for d in diags]
    assert tuple(bnd.tensor("table").shape) == (90,)
    assert any("'table' shape [90]" in d.message and "allocation" in d.message for d in diags)
