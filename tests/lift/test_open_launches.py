"""Launches the host sizes at run time: a grid axis the source gives no value for covers the
kernel's guard on that axis (or takes a fixed number of blocks), a run-time block is the default
block of a kernel whose work does not depend on it, and a value the host writes through a C++
reference, or a call in device code sharing a launcher's name, never gives a launch of no
threads."""

from __future__ import annotations

import pytest

from cuda2nki.binding import eval_c_expr
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference, infer_binding

SCALE = """
__global__ void scale(float* y, const float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
"""

#: host code whose grid the source computes at run time; the block is a constant
RUNTIME_GRIDS = {
    "ternary-of-an-unseen-helper": (
        """
unsigned count_pairs(int n);
void run(float* y, const float* x, int n, int last) {
    unsigned pairs = (last > 64) ? count_pairs(n) : (n - last) / 64;
    scale<<<pairs, 256>>>(y, x, 2.0f, n);
}""",
        256,
    ),
    "dim3-from-a-struct-field": (
        """
struct Config { int blocks; int rows; };
void launch_it(const Config& cfg, float* out, const float* in, int total) {
    dim3 grid(cfg.blocks);
    dim3 block(128);
    scale<<<grid, block>>>(out, in, 0.5f, total);
}""",
        128,
    ),
    "grid-member-set-in-a-loop": (
        """
void go(float* y, const float* x, int m, int steps, const int* level_blocks) {
    dim3 threads(64, 1);
    dim3 grid(1, 1);
    for (int s = 0; s < steps; ++s) {
        grid.x = level_blocks[s];
        scale<<<grid, threads>>>(y, x, 1.5f, m);
    }
}""",
        64,
    ),
    "zero-at-the-defaults-taken": (
        """
int main() {
    float *y, *x;
    unsigned int workers = omp_get_num_threads();
    unsigned int n = 8192;
    dim3 t(128);
    dim3 g(n / (t.x * workers));
    scale<<<g, t>>>(y, x, 3.0f, n);
}""",
        128,
    ),
}


@pytest.mark.parametrize("host", sorted(RUNTIME_GRIDS))
def test_a_runtime_grid_covers_the_guard(host: str) -> None:
    text, block = RUNTIME_GRIDS[host]
    tu = parse_source(SCALE + text, "scale.cu")
    partial, diags = infer_binding(tu, "scale")
    launch = partial.get("launch")
    assert launch is not None, [d.message for d in diags]
    assert launch["block"][0] == block and all(b == 1 for b in launch["block"][1:])
    assert launch["grid"] == [f"ceil_div(n, {block})"]
    assert "open_axes" not in launch and "open_source" not in launch
    assert any(d.code == "C2N2100" and "is a run-time value" in d.message for d in diags)
    bnd, notes = binding_from_inference(tu, "scale")
    assert bnd is not None, [d.message for d in notes]
    for n in (1, block - 1, block + 1, 5 * block):
        assert eval_c_expr(bnd.grid[0], {"n": n}) * block >= n


BLEND = """
__global__ void blend(float* c, const float* a, const float* b, int w, int h) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < h && col < w) c[row * w + col] = 0.5f * (a[row * w + col] + b[row * w + col]);
}
"""


@pytest.mark.parametrize(
    "host",
    [
        # a dim3 grid of two run-time components
        """
int tiles(int);
void run(float* c, const float* a, const float* b, int w, int h) {
    dim3 threads(16, 8);
    dim3 grid(tiles(w), tiles(h));
    blend<<<grid, threads>>>(c, a, b, w, h);
}""",
        # a grid the source shows no component of (one name, the kernel reads blockIdx.y)
        """
dim3 pick_grid(int, int);
void run(float* c, const float* a, const float* b, int w, int h) {
    dim3 g = pick_grid(w, h);
    blend<<<g, dim3(16, 8, 1)>>>(c, a, b, w, h);
}""",
    ],
)
def test_a_runtime_two_dimensional_grid_covers_both_guards(host: str) -> None:
    tu = parse_source(BLEND + host, "blend.cu")
    partial, diags = infer_binding(tu, "blend")
    launch = partial.get("launch")
    assert launch is not None, [d.message for d in diags]
    assert launch["grid"][:2] == ["ceil_div(w, 16)", "ceil_div(h, 8)"]
    assert binding_from_inference(tu, "blend")[0] is not None


STRIDE = """
__global__ void fill(int* out, int v, int len) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < len; i += blockDim.x * gridDim.x)
        out[i] = v;
}
void run(int* out, int len, int sms) {
    int blocks = sms * occupancy_of(fill);
    fill<<<blocks, 256>>>(out, 7, len);
}
int occupancy_of(void (*k)(int*, int, int));
"""


def test_a_runtime_grid_of_a_grid_stride_kernel_is_a_fixed_number_of_blocks() -> None:
    tu = parse_source(STRIDE, "fill.cu")
    partial, diags = infer_binding(tu, "fill")
    launch = partial.get("launch")
    assert launch is not None, [d.message for d in diags]
    assert launch["block"] == [256]
    assert isinstance(launch["grid"][0], int) and launch["grid"][0] >= 1
    assert binding_from_inference(tu, "fill")[0] is not None


#: both grid and block computed at run time
RUNTIME_BOTH = {
    "members-of-a-simulation-object": """
class Wave {
  public:
    void step(float* y, const float* x, int n) { scale<<<m_blocks, m_threads>>>(y, x, 0.1f, n); }
    size_t m_blocks, m_threads;
};""",
    "out-parameters-of-a-helper-elsewhere": """
void grid_size(unsigned n, unsigned bs, unsigned* blocks, unsigned* threads);
void run(float* y, const float* x, int count) {
    unsigned nb, nt;
    grid_size(count, 256, &nb, &nt);
    scale<<<nb, nt>>>(y, x, 4.0f, count);
}""",
}


@pytest.mark.parametrize("host", sorted(RUNTIME_BOTH))
def test_a_runtime_block_of_a_shape_free_kernel_is_the_default_block(host: str) -> None:
    tu = parse_source(SCALE + RUNTIME_BOTH[host], "scale.cu")
    partial, diags = infer_binding(tu, "scale")
    launch = partial.get("launch")
    assert launch is not None, [d.message for d in diags]
    b = launch["block"][0]
    assert isinstance(b, int) and b > 0
    assert launch["grid"] == [f"ceil_div(n, {b})"]
    assert binding_from_inference(tu, "scale")[0] is not None


def test_a_runtime_block_of_a_kernel_sized_by_its_block_stays_missing() -> None:
    src = """
__global__ void block_sums(float* out, const float* in, int n) {
    extern __shared__ float part[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    part[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}
class Runner {
  public:
    void go(float* o, const float* x, int n) {
        block_sums<<<m_grid, m_block, m_block * sizeof(float)>>>(o, x, n);
    }
    unsigned m_grid, m_block;
};"""
    partial, diags = infer_binding(parse_source(src, "sums.cu"), "block_sums")
    assert "launch" not in partial
    assert any(d.code == "C2N2101" and "launch configuration" in d.message for d in diags)


#: the block's size written through a C++ reference by a helper of the file
REFERENCES = {
    "int-refs": """
void launch_size(int n, int &blocks, int &threads) {
    threads = n < 256 ? 64 : 256;
    blocks = (n + threads - 1) / threads;
}
int main() {
    float *y, *x;
    int n = 1000;
    int blocks = 0, threads = 0;
    launch_size(n, blocks, threads);
    scale<<<blocks, threads>>>(y, x, 2.0f, n);
}""",
    "unsigned-refs-through-a-launcher": """
void config(unsigned& nb, unsigned& nt, int total);
void apply(float* y, const float* x, int total, unsigned nb, unsigned nt) {
    scale<<<dim3(nb), dim3(nt)>>>(y, x, -1.0f, total);
}
int main() {
    float *y, *x;
    unsigned blocks = 0;
    unsigned threads = 0;
    config(blocks, threads, 4096);
    apply(y, x, 4096, blocks, threads);
}""",
}


@pytest.mark.parametrize("host", sorted(REFERENCES))
def test_a_size_written_through_a_reference_is_not_its_zero_placeholder(host: str) -> None:
    tu = parse_source(SCALE + REFERENCES[host], "scale.cu")
    partial, diags = infer_binding(tu, "scale")
    launch = partial.get("launch")
    assert launch is not None, [d.message for d in diags]
    assert all(isinstance(b, int) and b > 0 for b in launch["block"])
    assert binding_from_inference(tu, "scale")[0] is not None


def test_a_const_reference_is_not_written() -> None:
    src = (
        SCALE
        + """
void show(const int &threads);
int main() {
    float *y, *x;
    int threads = 128;
    show(threads);
    scale<<<(500 + threads - 1) / threads, threads>>>(y, x, 1.0f, 500);
}"""
    )
    partial, diags = infer_binding(parse_source(src, "scale.cu"), "scale")
    assert partial["launch"]["block"] == [128], [d.message for d in diags]
    assert not any("run-time" in d.message for d in diags)


#: calls named like the host launcher that do not call it
NOT_CALLERS = {
    "device-overload": """
__device__ float combine(float a, float b) { return a + b; }
__global__ void pair_sum(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = combine(in[i], (float)0);
}
void combine(int n, int threads, float* out, const float* in) {
    pair_sum<<<(n + threads - 1) / threads, threads>>>(out, in, n);
}
int main() { float *o, *x; combine(2048, 128, o, x); }""",
    "qualified-library-call": """
__global__ void pair_sum(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + 1.0f;
}
void sort(int n, int threads, float* out, const float* in) {
    pair_sum<<<(n + threads - 1) / threads, threads>>>(out, in, n);
}
int main() {
    float h[16];
    float *o, *x;
    thrust::sort(h, 0, o, x);
    sort(2048, 128, o, x);
}""",
}


@pytest.mark.parametrize("host", sorted(NOT_CALLERS))
def test_a_call_that_cannot_call_the_launcher_gives_it_no_values(host: str) -> None:
    tu = parse_source(NOT_CALLERS[host], "pairs.cu")
    partial, diags = infer_binding(tu, "pair_sum")
    assert partial.get("launch", {}).get("block") == [128], [d.message for d in diags]
    assert binding_from_inference(tu, "pair_sum")[0] is not None
