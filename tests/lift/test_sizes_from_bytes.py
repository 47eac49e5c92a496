"""Sizes the host spells in bytes or leaves at 0, and test sizes that keep the launch alive.

* ``n = bytes / sizeof(T)`` bounds a loop: the pointer's extent is ``bytes / 4`` for a float;
  a constant access beside it (``ptr[0] = total``) does not hide it;
* a size the host gives as 0 (``size_t len = 0;`` filled at run time) sizes nothing: a default
  size with a note instead;
* a production size is halved for simulation only while the launch still runs a block on every
  axis (a grid counted in whole pages of the data)."""

from __future__ import annotations

import pytest

from cuda2nki.binding import eval_c_expr
from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import binding_from_inference, infer_binding

BYTES = {
    "grid_stride": """
__global__ void total(float* buf, const size_t nbytes) {
    size_t n = nbytes / sizeof(float);
    float acc = 0.0f;
    for (size_t i = threadIdx.x + blockIdx.x * blockDim.x; i < n; i += blockDim.x * gridDim.x)
        acc += buf[i];
    if (threadIdx.x == 0) buf[0] = acc;
}
void go(float* buf, size_t nbytes) { total<<<40, 128>>>(buf, nbytes); }
""",
    "guarded_double": """
__global__ void halve(double* v, unsigned long long bytes) {
    unsigned long long count = bytes / sizeof(double);
    unsigned long long k = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (k < count) v[k] *= 0.5;
}
void go(double* v, unsigned long long bytes) { halve<<<(bytes / 8 + 63) / 64, 64>>>(v, bytes); }
""",
    "int_tail_first": """
__global__ void tally(int* cnt, long len_bytes) {
    long m = len_bytes / (long)sizeof(int);
    if (blockIdx.x == 0 && threadIdx.x == 0) cnt[0] += 1;
    for (long j = blockIdx.x * blockDim.x + threadIdx.x; j < m; j += gridDim.x * blockDim.x)
        cnt[j] += 2;
}
void go(int* cnt, long len_bytes) { tally<<<16, 256>>>(cnt, len_bytes); }
""",
}


@pytest.mark.parametrize("name", sorted(BYTES))
def test_a_byte_count_over_sizeof_bounds_the_pointer(name: str) -> None:
    tu = parse_source(BYTES[name], "k.cu")
    (fn,) = tu.kernels
    partial, diags = infer_binding(tu, fn.name)
    ptr, size = fn.params[0].name, fn.params[1].name
    shape = partial["params"][ptr].get("shape")
    assert shape is not None and len(shape) == 1, [d.message for d in diags]
    width = {"total": 4, "halve": 8, "tally": 4}[fn.name]
    for n in (64, 1000, 4096):
        assert int(eval_c_expr(str(shape[0]), {size: n * width})) == n


ZERO_FILLED = {
    "placeholder_local": """
__global__ void clear(float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 0.0f;
}
int main() {
    size_t bytes = 0;
    float* out;
    cudaMallocManaged(&out, 1 << 20);
    clear<<<64, 128>>>(out, bytes / sizeof(float));
}
""",
    "config_member": """
struct Config { int count; int reps; };
__global__ void clear(float* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = 0.0f;
}
int main() {
    Config cfg;
    cfg.count = 0;
    cfg.reps = 3;
    float* out;
    clear<<<32, 256>>>(out, cfg.count);
}
""",
}


@pytest.mark.parametrize("name", sorted(ZERO_FILLED))
def test_a_size_the_host_leaves_at_zero_takes_a_default(name: str) -> None:
    tu = parse_source(ZERO_FILLED[name], "k.cu")
    partial, diags = infer_binding(tu, "clear")
    assert partial["params"]["n"] > 0
    notes = [d.message for d in diags if d.code == "C2N2100" and "n = " in d.message]
    assert any("sizes nothing" in m for m in notes), notes
    bnd, diags = binding_from_inference(tu, "clear")
    assert bnd is not None, [d.message for d in diags]


@pytest.mark.parametrize(
    ("grid", "page"),
    [
        ("(n * 4 + 65535) / 65536 * 32 / 256", 65536),
        ("((n + 4095) / 4096) / 4", 4096),
        ("(n / 2048) * 2 / 16", 2048),
    ],
)
def test_a_smaller_test_size_still_launches_a_block(grid: str, page: int) -> None:
    src = f"""
__global__ void fill(int n, float* x) {{
    int stride = blockDim.x * gridDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) x[i] = 1.0f;
}}
int main() {{
    int N = 1 << 22;
    float* x;
    cudaMallocManaged(&x, N * sizeof(float));
    fill<<<{grid.replace("n", "N")}, 256>>>(N, x);
}}
"""
    tu = parse_source(src, "k.cu")
    partial, diags = infer_binding(tu, "fill")
    n = partial["params"]["n"]
    assert n < 1 << 22  # still reduced for simulation
    (g,) = partial["launch"]["grid"]
    assert int(eval_c_expr(str(g), {"n": n})) >= 1, (g, n)
    bnd, diags = binding_from_inference(tu, "fill")
    assert bnd is not None, [d.message for d in diags]
