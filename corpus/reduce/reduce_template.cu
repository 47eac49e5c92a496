// Per-block sums with the block size as a template parameter: each thread first adds two
// elements (i and i + BLOCK), then an unrolled shared-memory tree; one result per 2*BLOCK chunk.
#include <cuda_runtime.h>

template <int BLOCK>
__global__ void block_sum_tpl(const float* __restrict__ g_in, float* __restrict__ g_out,
                              unsigned int n) {
    __shared__ float smem[BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (BLOCK * 2) + threadIdx.x;
    float s = 0.0f;
    if (i < n) s = g_in[i];
    if (i + BLOCK < n) s += g_in[i + BLOCK];
    smem[tid] = s;
    __syncthreads();
#pragma unroll
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (tid < stride) smem[tid] += smem[tid + stride];
        __syncthreads();
    }
    if (tid == 0) g_out[blockIdx.x] = smem[0];
}

void launch_block_sum(const float* in, float* out, unsigned int n) {
    unsigned int blocks = (n + 511) / 512;
    block_sum_tpl<256><<<blocks, 256>>>(in, out, n);
}
