"""Allocation sizes as evidence: a pointer whose accesses do not bound it (a gather table indexed
by data) takes the extent its host code allocates, through several spellings of allocation."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference

#: an embedding lookup: ``ix`` is data, so nothing in the kernel bounds ``table``
GATHER = """
__global__ void embed(float* out, const int* ids, const float* table, int N, int D) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N * D) {
        int row = i / D, d = i % D;
        int ix = ids[row];
        out[row * D + d] = table[ix * D + d];
    }
}
"""

#: host code allocating ``table`` for VOCAB rows of D floats, spelled several ways
HOSTS = {
    "cudaMalloc-address-of": """
void host(int N, int D) {
    float *d_out, *d_table; int* d_ids;
    cudaMalloc(&d_out, N * D * sizeof(float));
    cudaMalloc(&d_ids, N * sizeof(int));
    cudaMalloc(&d_table, VOCAB * D * sizeof(float));
    embed<<<(N * D + 127) / 128, 128>>>(d_out, d_ids, d_table, N, D);
}
int main() { host(64, 32); }""",
    "void-star-star-and-bytes-local": """
int main() {
    int n = 64, dim = 32;
    float *out, *tab; int* ids;
    size_t tab_bytes = (size_t)VOCAB * dim * sizeof(float);
    cudaMalloc((void**)&tab, tab_bytes);
    cudaMalloc((void **) &out, n * dim * sizeof(float));
    cudaMalloc((void**)&ids, n * sizeof(int));
    embed<<<(n * dim + 255) / 256, 256>>>(out, ids, tab, n, dim);
}""",
    "managed-through-a-launcher": """
void launch(float* o, const int* t, const float* w, int rows, int width) {
    embed<<<(rows * width + 63) / 64, 64>>>(o, t, w, rows, width);
}
int main() {
    const int rows = 64;
    const int width = 32;
    float* o; int* t; float* w;
    cudaMallocManaged(&o, rows * width * sizeof(float));
    cudaMallocManaged(&t, rows * sizeof(int));
    cudaMallocManaged(&w, sizeof(float) * VOCAB * width, cudaMemAttachGlobal);
    launch(o, t, w, rows, width);
}""",
    "host-mirror-new-copied": """
float* device_alloc(size_t);
size_t table_bytes(int, int);
int main() {
    int N = 64, D = 32;
    float* h_table = new float[VOCAB * D];
    float* d_table = device_alloc(0);
    float* d_out = device_alloc(0);
    int* d_ids = (int*)device_alloc(0);
    cudaMemcpy(d_table, h_table, table_bytes(VOCAB, D), cudaMemcpyHostToDevice);
    embed<<<(N * D + 127) / 128, 128>>>(d_out, d_ids, d_table, N, D);
}""",
    "host-mirror-malloc-copy-size": """
float* device_alloc(size_t);
int main() {
    int N = 64, D = 32;
    float* h_table = (float*)malloc(VOCAB * D * sizeof(float));
    float* d_table = device_alloc(0);
    float* d_out = device_alloc(0);
    int* d_ids = (int*)device_alloc(0);
    cudaMemcpy(d_table, h_table, VOCAB * D * sizeof(float), cudaMemcpyHostToDevice);
    embed<<<(N * D + 127) / 128, 128>>>(d_out, d_ids, d_table, N, D);
}""",
}


@pytest.mark.parametrize("spelling", sorted(HOSTS))
@pytest.mark.parametrize("vocab", [1000, 50257])
def test_a_gather_table_takes_its_allocation(spelling: str, vocab: int) -> None:
    src = f"#define VOCAB {vocab}\n" + GATHER + HOSTS[spelling]
    tu = parse_source(src, "embed.cu")
    bnd, diags = binding_from_inference(tu, "embed")
    assert bnd is not None, [d.message for d in diags]
    dim = bnd.param_names[4]
    assert [str(x) for x in bnd.tensor("table").shape] == [str(vocab), dim]  # rows of D
    note = next(d for d in diags if "'table' shape" in d.message)
    assert "its allocation (embed.cu:" in note.message


def test_calloc_counts_elements_times_size() -> None:
    host = """
int main() {
    int N = 64, D = 32;
    float* d_table = (float*)calloc(VOCAB * D, sizeof(float));
    float* d_out = (float*)calloc(N * D, 4);
    int* d_ids = (int*)calloc(N, sizeof(int));
    embed<<<(N * D + 127) / 128, 128>>>(d_out, d_ids, d_table, N, D);
}"""
    tu = parse_source("#define VOCAB 300\n" + GATHER + host, "embed.cu")
    bnd, _ = binding_from_inference(tu, "embed")
    assert bnd is not None and [str(x) for x in bnd.tensor("table").shape] == ["300", "D"]


def test_bounded_accesses_keep_their_shape_and_unknown_allocations_take_default_rows() -> None:
    host = """
float* device_alloc(size_t);
int main() {
    int N = 64, D = 32;
    float* d_table = device_alloc(VOCAB);
    float* d_out; int* d_ids;
    cudaMalloc(&d_out, 2 * N * D * sizeof(float));
    cudaMalloc(&d_ids, N * sizeof(int));
    embed<<<(N * D + 127) / 128, 128>>>(d_out, d_ids, d_table, N, D);
}"""
    tu = parse_source("#define VOCAB 300\n" + GATHER + host, "embed.cu")
    bnd, diags = binding_from_inference(tu, "embed")
    # the table's allocation is not visible: a default number of rows, said in a note
    assert bnd is not None and [str(x) for x in bnd.tensor("table").shape] == ["64", "D"]
    assert any(
        d.code == "C2N2100" and "'table' shape" in d.message and "a default" in d.message
        for d in diags
    )
    assert not any("'out' shape" in d.message for d in diags)  # bounded by its accesses


def test_an_allocation_that_is_not_whole_elements_is_not_evidence() -> None:
    host = """
int main() {
    int N = 64, D = 32;
    float *o, *w; int* t;
    cudaMalloc(&w, VOCAB * D * 2 + 1);
    cudaMalloc(&o, N * D * sizeof(float));
    cudaMalloc(&t, N * sizeof(int));
    embed<<<(N * D + 127) / 128, 128>>>(o, t, w, N, D);
}"""
    tu = parse_source("#define VOCAB 300\n" + GATHER + host, "embed.cu")
    bnd, diags = binding_from_inference(tu, "embed")
    assert not any(
        "'table' shape" in d.message and "from its allocation" in d.message for d in diags
    )
    assert bnd is not None and [str(x) for x in bnd.tensor("table").shape] == ["64", "D"]


@pytest.mark.parametrize(
    "guard",
    [
        "if (idx >= count) return;",
        "if (idx > count - 1) return;",
        "if (!(idx < count)) return;",
    ],
)
def test_an_exit_guard_bounds_a_buffer_allocated_with_slack(guard: str) -> None:
    """A buffer allocated with slack (``count + 3`` elements) that the kernel writes only below
    its exit guard keeps the guard's extent: the slack is not the kernel's to write."""
    src = f"""
__global__ void fill_keys(int* keys, int count) {{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    {guard}
    keys[idx] = idx + idx / 2 + 1;
}}
int main() {{
    int count = 700; int* d_keys;
    cudaMalloc(&d_keys, (count + 3) * sizeof(int));
    fill_keys<<<(count + 255) / 256, 256>>>(d_keys, count);
    return 0;
}}
"""
    bnd, diags = binding_from_inference(parse_source(src, "k.cu"), "fill_keys")
    assert bnd is not None and [str(x) for x in bnd.tensor("keys").shape] == ["count"]
    assert not any("from its allocation" in d.message for d in diags)
