// Sum of a whole vector: each thread accumulates its grid-stride elements straight into its
// shared slot, a tree (barrier at the top of each step) folds the block, one atomicAdd per block.
#include <cuda_runtime.h>

#define BLOCK 256

__global__ void sum_smem_accum_atomic(const float* in, float* total, int len) {
    __shared__ float part[BLOCK];
    const int t = threadIdx.x;
    part[t] = 0.0f;
    int pos = blockIdx.x * blockDim.x + t;
    while (pos < len) {
        part[t] += in[pos];
        pos += blockDim.x * gridDim.x;
    }
    for (unsigned int half = blockDim.x / 2; half > 0; half >>= 1) {
        __syncthreads();
        if (t < half) part[t] += part[t + half];
    }
    if (t == 0) atomicAdd(total, part[0]);
}

void launch_sum_smem_accum_atomic(const float* in, float* total, int len) {
    sum_smem_accum_atomic<<<32, BLOCK>>>(in, total, len);
}
