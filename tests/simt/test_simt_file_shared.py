"""File-scope ``__shared__`` variables in the interpreter: one array per block, the same one for
the kernel and every device function naming it, poisoned until written, sized by the launch when
declared ``extern``."""

from __future__ import annotations

import numpy as np
from simt_helpers import f32, fault, i32, run


def test_kernel_and_device_functions_address_one_array_per_block() -> None:
    src = """
__shared__ float pool[4];
__device__ void deposit(float v) { pool[threadIdx.x] = v; }
__device__ float left_of(int t) { return pool[(t + 3) % 4]; }
__global__ void k(const float* x, float* y) {
    int i = blockIdx.x * 4 + threadIdx.x;
    deposit(x[i] * 2.0f);
    __syncthreads();
    y[i] = left_of(threadIdx.x) + pool[threadIdx.x];
}
"""
    x = np.arange(8, dtype=np.float32)
    out = run(src, grid=(2,), block=(4,), x=x, y=np.zeros(8, np.float32))
    two = 2 * x
    want = np.concatenate([np.roll(two[:4], 1) + two[:4], np.roll(two[4:], 1) + two[4:]])
    np.testing.assert_array_equal(out["y"], want)


def test_a_kernel_using_it_only_through_a_callee() -> None:
    src = """
__shared__ int tally[2][3];
__device__ int mark(int r, int c, int v) {
    tally[r][c] = v;
    __syncthreads();
    return tally[1 - r][2 - c];
}
__global__ void flip(int* out) {
    int t = threadIdx.y * 3 + threadIdx.x;
    out[blockIdx.x * 6 + t] = mark(threadIdx.y, threadIdx.x, t + 10 * blockIdx.x);
}
"""
    out = run(src, grid=(2,), block=(3, 2), out=np.zeros(12, np.int32))
    first = np.arange(6, dtype=np.int32)[::-1]
    np.testing.assert_array_equal(out["out"], np.concatenate([first, first + 10]))


def test_unwritten_file_scope_shared_reads_are_poisoned() -> None:
    src = """
__shared__ float never[8];
__global__ void k(float* y) { y[threadIdx.x] = never[threadIdx.x]; }
"""
    out = run(src, block=(8,), y=np.zeros(8, np.float32))
    assert np.isnan(out["y"]).all()


def test_file_scope_extern_shared_takes_the_launch_size() -> None:
    src = """
extern __shared__ int words[];
__global__ void k(const int* a, int* b) {
    words[threadIdx.x] = a[threadIdx.x];
    __syncthreads();
    b[threadIdx.x] = words[blockDim.x - 1 - threadIdx.x];
}
"""
    out = run(src, block=(4,), shared_bytes=16, a=i32(1, 2, 3, 4), b=i32(0, 0, 0, 0))
    np.testing.assert_array_equal(out["b"], i32(4, 3, 2, 1))
    d = fault(src, block=(4,), shared_bytes=8, a=i32(1, 2, 3, 4), b=i32(0, 0, 0, 0))
    assert "words" in d.message


def test_two_kernels_of_a_file_share_the_declaration_not_the_data() -> None:
    src = """
__shared__ float scratch[2];
__global__ void fill(float* y) { scratch[threadIdx.x] = 7.0f; y[threadIdx.x] = scratch[threadIdx.x]; }
__global__ void peek(float* y) { y[threadIdx.x] = scratch[threadIdx.x]; }
"""
    assert (run(src, "fill", block=(2,), y=f32(0, 0))["y"] == 7).all()
    assert np.isnan(run(src, "peek", block=(2,), y=f32(0, 0))["y"]).all()
