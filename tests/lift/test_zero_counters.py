"""A counter a kernel takes slots from (an atomicAdd/atomicSub whose old value is used) that the
host zeroes right before the launch starts at zero in the inferred binding (range [0, 1)), so
that check does not send the kernel's stores outside its output; any other counter, or one the
host does not zero just before, keeps random values."""

from __future__ import annotations

import pytest

from cuda2nki.frontend import parse_source
from cuda2nki.lift.infer import infer_binding

KERNELS = {
    "first_element": "int p = atomicAdd(&cnt[0], 1); if (p < n) out[p] = x[i];",
    "pointer_itself": "if (x[i] > 0.5f) out[atomicAdd(cnt, 1)] = x[i];",
    "per_thread_increment": "int k = x[i] > 0.f ? 2 : 0; int b = atomicAdd(cnt + 0, k);"
    " if (k) out[b % n] = x[i];",
    "subtraction": "int left = atomicSub(&cnt[0], 1); if (left > 0) out[left % n] = x[i];",
}

KERNEL = """
__global__ void bump(int* c) { c[0] += 5; }
__global__ void k(float* out, int* cnt, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { BODY }
}
"""

HOSTS = {
    "memset_before": "cudaMemset(d_cnt, 0, sizeof(int));\n    LAUNCH",
    "checked_memset_in_a_loop": "for (int r = 0; r < 3; r++) {\n"
    "        CHECK(cudaMemset(d_cnt, 0, sizeof(int)));\n        LAUNCH\n    }",
    "async_memset_then_other_calls": "cudaMemsetAsync(d_cnt, 0, 4, 0);\n"
    "    cudaMemcpy(d_x, h, n * sizeof(float), cudaMemcpyHostToDevice);\n    LAUNCH",
}

NOT_ZEROED = {
    "no_memset": "cudaMemcpy(d_cnt, h, sizeof(int), cudaMemcpyHostToDevice);\n    LAUNCH",
    "copied_after_memset": "cudaMemset(d_cnt, 0, sizeof(int));\n"
    "    cudaMemcpy(d_cnt, h, sizeof(int), cudaMemcpyHostToDevice);\n    LAUNCH",
    "filled_with_ones": "cudaMemset(d_cnt, 1, sizeof(int));\n    LAUNCH",
    "memset_after_the_launch": "LAUNCH\n    cudaMemset(d_cnt, 0, sizeof(int));",
    "another_launch_between": "cudaMemset(d_cnt, 0, sizeof(int));\n"
    "    bump<<<1, 1>>>(d_cnt);\n    LAUNCH",
}

MAIN = """
#define CHECK(x) x
int main() {
    int n = 1000; float* h = 0;
    float *d_out, *d_x; int* d_cnt;
    cudaMalloc(&d_out, n * sizeof(float)); cudaMalloc(&d_x, n * sizeof(float));
    cudaMalloc(&d_cnt, sizeof(int));
    HOST
    return 0;
}
"""

_LAUNCH = "k<<<(n + 63) / 64, 64>>>(d_out, d_cnt, d_x, n);"


def _cnt(body: str, host: str) -> dict:
    src = KERNEL.replace("BODY", body) + MAIN.replace("HOST", host.replace("LAUNCH", _LAUNCH))
    partial, diags = infer_binding(parse_source(src, "z.cu"), "k")
    spec = partial["params"]["cnt"]
    assert spec["role"] == "inout", diags
    return spec


@pytest.mark.parametrize("host", sorted(HOSTS))
@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_a_slot_counter_zeroed_by_the_host_starts_at_zero(kernel: str, host: str) -> None:
    assert _cnt(KERNELS[kernel], HOSTS[host]).get("range") == [0, 1]


@pytest.mark.parametrize("host", sorted(NOT_ZEROED))
def test_a_counter_the_host_does_not_zero_right_before_keeps_random_values(host: str) -> None:
    assert "range" not in _cnt(KERNELS["first_element"], NOT_ZEROED[host])


def test_a_total_whose_old_value_is_unused_keeps_random_values() -> None:
    body = "atomicAdd(&cnt[0], 1); out[i] = x[i];"
    assert "range" not in _cnt(body, HOSTS["memset_before"])
