"""Allocations through a helper of the host code (``dev_alloc((void**)&p, bytes)`` whose body is
``cudaMalloc(ptr, bytes)``): the pointer takes the size the caller passes, evaluated in the
helper with its parameters bound to the caller's arguments."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference

#: a row lookup: ``r`` is data, so only the allocation sizes ``lut``
LOOKUP = """
__global__ void pick_rows(float* dst, const int* which, const float* lut, int M, int W) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < M * W) {
        int m = i / W, c = i % W;
        int r = which[m];
        dst[m * W + c] = lut[r * W + c];
    }
}
"""

HOSTS = {
    "void-star-star-bytes": """
void dev_alloc(void** p, size_t bytes) { cudaMalloc(p, bytes); }
int main() {
    int M = 64, W = 16;
    float *d, *l; int* w;
    dev_alloc((void**)&d, M * W * sizeof(float));
    dev_alloc((void**)&w, M * sizeof(int));
    dev_alloc((void**)&l, ROWS * W * sizeof(float));
    pick_rows<<<(M * W + 127) / 128, 128>>>(d, w, l, M, W);
}""",
    "typed-count-managed": """
int floats_on_device(float** where, int count) {
    return (int)cudaMallocManaged((void**)where, count * sizeof(float));
}
void run(float* out, const int* idx, const float* table, int m, int width) {
    pick_rows<<<(m * width + 255) / 256, 256>>>(out, idx, table, m, width);
}
int main() {
    const int m = 32, width = 8;
    float *out, *table; int* idx;
    floats_on_device(&out, m * width);
    cudaMalloc(&idx, m * sizeof(int));
    floats_on_device(&table, ROWS * width);
    run(out, idx, table, m, width);
}""",
    "checked-helper-bytes-local": """
#define CHECK(x) do { if ((x) != 0) return; } while (0)
static void grab(size_t n_bytes, void** slot) { CHECK(cudaMalloc(slot, n_bytes)); }
void launch(int M, int W) {
    float *a, *b; int* c;
    size_t lut_bytes = (size_t)ROWS * W * sizeof(float);
    grab(M * W * sizeof(float), (void**)&a);
    grab(M * sizeof(int), (void**)&c);
    grab(lut_bytes, (void**)&b);
    pick_rows<<<(M * W + 63) / 64, 64>>>(a, c, b, M, W);
}
int main() { launch(48, 16); }""",
}


@pytest.mark.parametrize("spelling", sorted(HOSTS))
@pytest.mark.parametrize("rows", [100, 3000])
def test_a_table_allocated_through_a_helper_takes_that_size(spelling: str, rows: int) -> None:
    src = f"#define ROWS {rows}\n" + LOOKUP + HOSTS[spelling]
    tu = parse_source(src, "pick.cu")
    bnd, diags = binding_from_inference(tu, "pick_rows")
    assert bnd is not None, [d.message for d in diags]
    width = bnd.param_names[4]
    assert [str(x) for x in bnd.tensor("lut").shape] == [str(rows), width]
    note = next(d for d in diags if "'lut' shape" in d.message)
    assert "its allocation" in note.message and "pick.cu:" in note.message


def test_a_helper_that_allocates_another_parameter_is_no_evidence() -> None:
    host = """
void first_only(void** a, void** b, size_t n) { cudaMalloc(a, n); *b = 0; }
int main() {
    int M = 64, W = 16;
    float *d, *l; int* w;
    cudaMalloc(&d, M * W * sizeof(float));
    cudaMalloc(&w, M * sizeof(int));
    first_only((void**)&d, (void**)&l, ROWS * W * sizeof(float));
    pick_rows<<<(M * W + 127) / 128, 128>>>(d, w, l, M, W);
}"""
    tu = parse_source("#define ROWS 300\n" + LOOKUP + host, "pick.cu")
    _, diags = binding_from_inference(tu, "pick_rows")
    notes = [d.message for d in diags if "'lut' shape" in d.message]
    assert notes and not any("its allocation" in m for m in notes), notes
