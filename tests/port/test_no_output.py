"""A kernel that writes no global memory gets no port: there is nothing to compute or compare.

Kernels whose only effect is device ``printf`` (or nothing at all) used to be ported literally
into a module that returns no tensor, and ``check`` then compared nothing.  They are refused
with C2N2301 naming the reason; a kernel that writes an output, printf or not, still ports.
"""

from __future__ import annotations

import pytest

from cuda2nki.pipeline import port_file

NO_OUTPUT = {
    "printf_only": """
__global__ void k(int step) { printf("loop: %d\\n", step); }
int main() { for (int i = 0; i < 3; i++) k<<<1, 1>>>(i); return 0; }
""",
    "reads_input_prints": """
__global__ void k(const double *x, int n, double want) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] != want) printf("bad %d\\n", i);
}
int main() {
    int n = 1024; double *d; cudaMalloc(&d, n * sizeof(double));
    k<<<(n + 255) / 256, 256>>>(d, n, 1.0); return 0;
}
""",
    "shared_reduction_printed": """
#define NT 128
__global__ void k(int *data) {
    __shared__ int s[NT];
    int t = threadIdx.x;
    s[t] = data[t];
    __syncthreads();
    for (int h = NT / 2; h > 0; h /= 2) {
        if (t < h) s[t] += s[t + h];
        __syncthreads();
    }
    if (t == 0) printf("sum %d\\n", s[0]);
}
int main() { int *d; cudaMalloc(&d, NT * sizeof(int)); k<<<1, NT>>>(d); return 0; }
""",
    "empty_body": """
__global__ void k(float *unused) { }
int main() { float *d; cudaMalloc(&d, 64 * sizeof(float)); k<<<1, 64>>>(d); return 0; }
""",
}


@pytest.mark.parametrize("target", ["nki", "legacy"])
@pytest.mark.parametrize("name", sorted(NO_OUTPUT))
def test_a_kernel_without_outputs_is_refused(name: str, target: str, tmp_path) -> None:
    cu = tmp_path / f"{name}.cu"
    cu.write_text(NO_OUTPUT[name])
    res = port_file(cu, kernel="k", target=target)
    assert res.source is None
    refusals = [d for d in res.diagnostics if d.code == "C2N2301"]
    assert refusals, [d.render() for d in res.diagnostics]
    assert "writes no global memory" in refusals[0].message
    assert refusals[0].loc.line > 0


def test_a_printing_kernel_with_an_output_still_ports(tmp_path) -> None:
    cu = tmp_path / "prints_and_writes.cu"
    cu.write_text(
        """
__global__ void k(const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) printf("start\\n");
    if (i < n) y[i] = 2.0f * x[i];
}
int main() {
    int n = 1000; float *a, *b; cudaMalloc(&a, n * sizeof(float)); cudaMalloc(&b, n * sizeof(float));
    k<<<(n + 127) / 128, 128>>>(a, b, n); return 0;
}
"""
    )
    res = port_file(cu, kernel="k", lowering="literal")
    assert res.source is not None, [d.render() for d in res.diagnostics]


UNBOUND_OUTPUT = {
    "record_member_store_macro_sizes": """
#define THREADS 128
#define COUNT 65536
struct Pixel { int r; int g; int b; int lo; int hi; int out; };
__global__ void k(Pixel* px) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int grey = (px[i].r + px[i].g + px[i].b) / px[i].hi;
    px[i].out = grey * px[i].lo;
}
void run() {
    Pixel* d;
    cudaMalloc(&d, COUNT * sizeof(Pixel));
    int blocks = COUNT / THREADS;
    k<<<blocks, THREADS>>>(d);
}
""",
    "compound_member_store": """
#define PER_BLOCK 256
#define TOTAL 131072
typedef struct { int a; int b; int c; int total; int spare; } Cell;
__global__ void k(Cell* q) {
    int j = blockIdx.x * PER_BLOCK + threadIdx.x;
    q[j].total += q[j].a * q[j].b / q[j].c;
}
int main() {
    Cell* q;
    cudaMalloc(&q, TOTAL * sizeof(Cell));
    k<<<TOTAL / PER_BLOCK, PER_BLOCK>>>(q);
    return 0;
}
""",
}


@pytest.mark.parametrize("name", sorted(UNBOUND_OUTPUT))
def test_a_record_written_through_its_members_is_an_inout_tensor(name: str, tmp_path) -> None:
    """Records written member by member: the binding inferred from the accesses holds the
    record array as an ``inout`` tensor of rows of fields, so the literal port writes it (no
    refusal for a kernel "without outputs")."""
    cu = tmp_path / f"{name}.cu"
    cu.write_text(UNBOUND_OUTPUT[name])
    res = port_file(cu, kernel="k", lowering="literal")
    assert res.source is not None, [d.render() for d in res.diagnostics]
    assert not [d for d in res.diagnostics if d.code == "C2N2301"]
    header = res.source.splitlines()[1]
    fields = UNBOUND_OUTPUT[name].split("{", 1)[1].split("}", 1)[0].count(";")
    assert header.startswith("# Binding: ") and f", {fields}] inout" in header, header
