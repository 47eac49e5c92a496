"""Counters and extrema in device memory updated under a condition on data: ``if (x[i] > t)
atomicAdd(&count, 1)``, ``if (ok) atomicMax(best, v)``.  The atomic where the condition is false
combines its op's identity, so the kernel is a reduction of ``cond ? v : identity`` over the
whole grid, combined with the counter's old value: recognised (not literal) and exact against
the SIMT interpreter, in several spellings (pointer parameter or ``__device__`` variable,
combined guard, early return, nested ``if``, a negated test, ``unsigned`` counter, a sum of
values, a maximum, a minimum of positions, different block sizes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.port.acceptance import check_kernel

_LAUNCH = '[launch]\ngrid = ["ceil_div({n}, {b})"]\nblock = [{b}]\n'

#: name -> (CUDA source, binding TOML)
KERNELS: dict[str, tuple[str, str]] = {
    "count_above": (
        """
__global__ void count_above(const float* x, float thr, int* hits, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > thr) atomicAdd(hits, 1);
}
""",
        'kernel = "count_above"\n'
        + _LAUNCH.format(n="n", b=128)
        + """[params]
x = { shape = ["n"], dtype = "float32", role = "in" }
hits = { shape = [1], dtype = "int32", role = "inout", range = [0, 9] }
thr = 0.25
n = 1000
[[check.shapes]]
n = 131
[[check.shapes]]
n = 5
""",
    ),
    "negatives": (
        """
__device__ unsigned int negative_count;
__global__ void negatives(const float* data, int len) {
    unsigned int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < len) {
        if (!(data[k] >= 0.0f)) {
            atomicAdd(&negative_count, 1u);
        }
    }
}
""",
        'kernel = "negatives"\n'
        + _LAUNCH.format(n="len", b=64)
        + """[params]
data = { shape = ["len"], dtype = "float32", role = "in" }
negative_count = { shape = [1], dtype = "uint32", role = "inout", range = [0, 9] }
len = 2000
[[check.shapes]]
len = 700
[[check.shapes]]
len = 3
""",
    ),
    "excess": (
        """
__device__ float excess_total;
__global__ void excess(const float* a, const float* b, float limit, int m) {
    int t = threadIdx.x + blockDim.x * blockIdx.x;
    if (t >= m) return;
    float d = a[t] - b[t];
    if (d > limit) atomicAdd(&excess_total, d - limit);
}
""",
        'kernel = "excess"\n'
        + _LAUNCH.format(n="m", b=256)
        + """[params]
a = { shape = ["m"], dtype = "float32", role = "in" }
b = { shape = ["m"], dtype = "float32", role = "in" }
excess_total = { shape = [1], dtype = "float32", role = "inout" }
limit = 0.1
m = 1500
[[check.shapes]]
m = 257
""",
    ),
    "best_nonneg": (
        """
__global__ void best_nonneg(const int* vals, int* best, int count) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < count) {
        int v = vals[j];
        if (v >= 0) atomicMax(best, v);
    }
}
""",
        'kernel = "best_nonneg"\n'
        + _LAUNCH.format(n="count", b=32)
        + """[params]
vals = { shape = ["count"], dtype = "int32", role = "in", range = [-500, 500] }
best = { shape = [1], dtype = "int32", role = "inout", range = [-5, 5] }
count = 900
[[check.shapes]]
count = 33
""",
    ),
    "first_outside": (
        """
__device__ int first_out;
__global__ void first_outside(const float* v, float lo, float hi, int len) {
    int k = blockDim.x * blockIdx.x + threadIdx.x;
    if (k < len) {
        if (v[k] < lo || v[k] > hi) {
            atomicMin(&first_out, k);
        }
    }
}
""",
        'kernel = "first_outside"\n'
        + _LAUNCH.format(n="len", b=96)
        + """[params]
v = { shape = ["len"], dtype = "float32", role = "in" }
first_out = { shape = [1], dtype = "int32", role = "inout", range = [5000, 6000] }
lo = -1.5
hi = 1.5
len = 1200
[[check.shapes]]
len = 129
""",
    ),
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_a_counter_under_a_data_condition_is_a_recognised_reduction(name, tmp_path) -> None:
    src, toml = KERNELS[name]
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    cu.with_suffix(".toml").write_text(toml)
    out = check_kernel(cu, "nki", tmp_path, max_points=3)
    assert out.status == "match", out
    assert "reduce" in out.idiom, out
    port = Path(tmp_path / f"{name}_nki.py").read_text()
    assert "tensor_reduce" in port
