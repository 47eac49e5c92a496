// Two-pass sum, first pass: each block of 256 threads sums a 1024-element chunk (4 loads per
// thread, strided by the block size) and writes one partial sum. The second pass is in this file
// too (final_sum) and in two_pass_final.cu; the sidecar binding selects partial_sums.
#include <cuda_runtime.h>

#define THREADS 256
#define ITEMS 4

__global__ void partial_sums(const float* __restrict__ x, float* __restrict__ partials, int n) {
    __shared__ float buf[THREADS];
    int base = blockIdx.x * THREADS * ITEMS + threadIdx.x;
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        int j = base + k * THREADS;
        if (j < n) s += x[j];
    }
    buf[threadIdx.x] = s;
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) buf[threadIdx.x] += buf[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = buf[0];
}

__global__ void final_sum(const float* __restrict__ partials, float* __restrict__ out, int m) {
    __shared__ float buf[THREADS];
    float s = 0.0f;
    for (int j = threadIdx.x; j < m; j += THREADS) s += partials[j];
    buf[threadIdx.x] = s;
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) buf[threadIdx.x] += buf[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = buf[0];
}

void launch_two_pass_sum(const float* x, float* partials, float* out, int n) {
    int blocks = (n + THREADS * ITEMS - 1) / (THREADS * ITEMS);
    partial_sums<<<blocks, THREADS>>>(x, partials, n);
    final_sum<<<1, THREADS>>>(partials, out, blocks);
}
