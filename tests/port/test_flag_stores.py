"""A flag raised by whichever thread sees something (``if (x[i] < 0) *seen = 1``): every
writer stores the same value to one element, so it ends as that value if any thread's condition
held and keeps its old value otherwise -- a count of the condition over the launch, combined with
the old value.  Recognised (not literal) and exact against the SIMT interpreter in several
spellings: a pointer parameter with a combined guard, a ``__device__`` flag in a grid-stride
loop, a float marker set to a scalar parameter after an early return."""

from __future__ import annotations

import pytest

from tests.port.acceptance import check_kernel

#: name -> (CUDA source, binding TOML)
KERNELS: dict[str, tuple[str, str]] = {
    "any_negative": (
        """
__global__ void any_negative(const float* x, int* seen, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] < 0.0f) *seen = 1;
}
""",
        """kernel = "any_negative"
[launch]
grid = ["ceil_div(n, 128)"]
block = [128]
[params]
x = { shape = ["n"], dtype = "float32", role = "in" }
seen = { shape = [1], dtype = "int32", role = "inout", range = [0, 1] }
n = 1000
[[check.shapes]]
n = 5
""",
    ),
    "find_key": (
        """
__device__ int found_key;
__global__ void find_key(const int* keys, int wanted, int count) {
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < count; k += gridDim.x * blockDim.x) {
        if (keys[k] == wanted) {
            found_key = 1;
        }
    }
}
""",
        """kernel = "find_key"
[launch]
grid = [6]
block = [64]
[params]
keys = { shape = ["count"], dtype = "int32", role = "in", range = [0, 50] }
found_key = { shape = [1], dtype = "int32", role = "inout", range = [0, 1] }
wanted = 7
count = 900
[[check.shapes]]
count = 10
""",
    ),
    "mark_large": (
        """
__global__ void mark_large(const float* a, float* marker, float tag, int len) {
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    if (t >= len) return;
    float v = a[t] * a[t];
    if (v > 2.0f) marker[0] = tag;
}
""",
        """kernel = "mark_large"
[launch]
grid = ["ceil_div(len, 256)"]
block = [256]
[params]
a = { shape = ["len"], dtype = "float32", role = "in" }
marker = { shape = [1], dtype = "float32", role = "inout" }
tag = 3.5
len = 1500
[[check.shapes]]
len = 4
""",
    ),
}


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_a_flag_any_thread_raises_is_a_recognised_count(name, tmp_path) -> None:
    src, toml = KERNELS[name]
    cu = tmp_path / f"{name}.cu"
    cu.write_text(src)
    cu.with_suffix(".toml").write_text(toml)
    out = check_kernel(cu, "nki", tmp_path, max_points=3)
    assert out.status == "match", out
    port = (tmp_path / f"{name}_nki.py").read_text()
    assert "tensor_reduce" in port and "tensor_copy_predicated" in port
