"""Host values written through a pointer by a call (a file or console read, a header parser, a
device query): inference takes a default or the nominal GPU's property, with a note, and the
binding completes."""

from __future__ import annotations

import pytest

from cuda2nki.binding import eval_c_expr
from cuda2nki.frontend import parse_source
from cuda2nki.frontend.hostvals import NOMINAL_DEVICE
from cuda2nki.lift.infer import binding_from_inference, infer_binding

BLEND = """
__global__ void blend(const unsigned char* a, const unsigned char* b, unsigned char* c,
                      int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) c[y * w + x] = (a[y * w + x] + b[y * w + x]) / 2;
}
"""

#: the image size is read at run time, each time in another way
READS = {
    "header-parser-after-zero": """
void read_header(const char* path, int* h, int* w);
int main(int argc, char** argv) {
    int height = 0, width = 0;
    read_header(argv[1], &height, &width);
    unsigned char *a, *b, *c;
    dim3 threads(16, 16, 1);
    dim3 blocks(width / 16, height / 16, 1);
    blend<<<blocks, threads>>>(a, b, c, width, height);
}""",
    "scanf-no-initializer": """
int main() {
    int w, h;
    scanf("%d %d", &w, &h);
    unsigned char *a, *b, *c;
    dim3 t(32, 8);
    dim3 g((w + t.x - 1) / t.x, (h + t.y - 1) / t.y);
    blend<<<g, t>>>(a, b, c, w, h);
}""",
    "fscanf-cast-address": """
void go(FILE* f, unsigned char* a, unsigned char* b, unsigned char* c) {
    int cols;
    int rows;
    fscanf(f, "%d", (int*)&cols);
    fread(&(rows), sizeof(int), 1, f);
    blend<<<dim3((cols + 15) / 16, (rows + 15) / 16), dim3(16, 16)>>>(a, b, c, cols, rows);
}""",
}


@pytest.mark.parametrize("host", sorted(READS))
def test_a_size_read_at_run_time_takes_a_default_and_says_so(host: str) -> None:
    tu = parse_source(BLEND + READS[host], "blend.cu")
    partial, diags = infer_binding(tu, "blend")
    assert "launch" in partial, [d.message for d in diags]
    assert all(g > 0 for g in partial["launch"]["grid"] if isinstance(g, int))
    notes = " ".join(d.message for d in diags)
    assert "at run time" in notes and "taken" in notes
    bnd, _ = binding_from_inference(tu, "blend")
    assert bnd is not None


KERNEL = """
__global__ void add_all(float* acc, const float* x, int n) {
    float s = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        s += x[i];
    atomicAdd(acc, s);
}
"""

SMS = NOMINAL_DEVICE["multiProcessorCount"]
PER_SM = NOMINAL_DEVICE["maxThreadsPerMultiProcessor"]

QUERIES = {
    "attribute-and-active-blocks": (
        """
void run(float* acc, const float* x, int n) {
    int sms;
    int per_sm;
    const int threads = 256;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, add_all, threads, 0);
    int blocks = min(per_sm * sms, (n + threads - 1) / threads);
    add_all<<<blocks, threads>>>(acc, x, n);
}
int main() { float *a, *x; run(a, x, 1 << 16); }""",
        min((PER_SM // 256) * SMS, (1 << 16) // 256),  # n as written
        256,
    ),
    "attribute-wrapped-in-a-check": (
        """
int main() {
    int device = 0, num_sm = 0;
    checkCudaErrors(cudaDeviceGetAttribute(&num_sm, cudaDevAttrMultiProcessorCount, device));
    float *a, *x;
    add_all<<<num_sm * 8, 128>>>(a, x, 5000);
}""",
        SMS * 8,
        128,
    ),
    "device-count": (
        """
int main() {
    int ngpus = 0;
    cudaGetDeviceCount(&ngpus);
    float *a, *x;
    add_all<<<4 * ngpus, 64>>>(a, x, 5000);
}""",
        4,
        64,
    ),
}


@pytest.mark.parametrize("host", sorted(QUERIES))
def test_device_queries_through_a_pointer_take_the_nominal_gpu(host: str) -> None:
    text, grid, block = QUERIES[host]
    tu = parse_source(KERNEL + text, "q.cu")
    partial, diags = infer_binding(tu, "add_all")
    g = partial["launch"]["grid"][0]
    n = partial["params"]["n"]
    assert (eval_c_expr(g, {"n": 1 << 16}) if isinstance(g, str) else g) == grid, diags
    assert isinstance(n, int) and n > 0
    assert partial["launch"]["block"][0] == block
    assert binding_from_inference(tu, "add_all")[0] is not None


def test_a_pointer_passed_only_to_an_allocation_is_not_a_written_size() -> None:
    """``cudaMalloc(&nb, ...)``-like calls never give ``nb`` a value."""
    text = """
int main() {
    int nb;
    cudaMallocHost(&nb, 4);
    float *a, *x;
    add_all<<<nb, 64>>>(a, x, 5000);
}"""
    partial, diags = infer_binding(parse_source(KERNEL + text, "m.cu"), "add_all")
    # no value from the allocation: the grid is a run-time one, chosen as a covering grid
    notes = " ".join(d.message for d in diags if d.code == "C2N2100")
    assert "'nb'" not in notes and "cudaMallocHost" not in notes
    assert "grid axis x of '<<<nb, ...>>>' is a run-time value" in notes


GATHER = """
__global__ void follow(int* out, const int* next, const int* start, int nodes) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v < nodes) out[v] = next[start[v]];
}
int main(int argc, char** argv) {
    FILE* fp = fopen(argv[1], "r");
    int nodes, edges;
    fscanf(fp, "%d", &nodes);
    fscanf(fp, "%d", &edges);
    int *d_out, *d_next, *d_start;
    cudaMalloc((void**)&d_out, sizeof(int) * nodes);
    cudaMalloc((void**)&d_next, sizeof(int) * edges);
    cudaMalloc((void**)&d_start, sizeof(int) * nodes);
    follow<<<(nodes + 255) / 256, 256>>>(d_out, d_next, d_start, nodes);
}
"""


def test_a_table_allocated_with_a_size_read_from_a_file_takes_the_default() -> None:
    """The table's accesses do not bound it; its allocation uses a size read at run time."""
    tu = parse_source(GATHER, "graph.cu")
    partial, diags = infer_binding(tu, "follow")
    assert partial["params"]["next"]["shape"] == [1024], [d.message for d in diags]
    assert binding_from_inference(tu, "follow")[0] is not None
