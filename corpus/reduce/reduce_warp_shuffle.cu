// Full sum: grid-stride per-thread sums, warp reduction with __shfl_down_sync, per-warp results in
// shared memory, the first warp combines them and lane 0 adds the block total to *total.
#include <cuda_runtime.h>

#define FULL_MASK 0xffffffff

__inline__ __device__ float warp_reduce_sum(float val) {
    for (int offset = warpSize / 2; offset > 0; offset /= 2) {
        val += __shfl_down_sync(FULL_MASK, val, offset);
    }
    return val;
}

__global__ void reduce_warp_shuffle(const float* __restrict__ x, float* total, int n) {
    __shared__ float warp_sums[32];
    float sum = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        sum += x[i];
    }
    int lane = threadIdx.x % warpSize;
    int wid = threadIdx.x / warpSize;
    sum = warp_reduce_sum(sum);
    if (lane == 0) {
        warp_sums[wid] = sum;
    }
    __syncthreads();
    int num_warps = blockDim.x / warpSize;
    if (wid == 0) {
        sum = (lane < num_warps) ? warp_sums[lane] : 0.0f;
        sum = warp_reduce_sum(sum);
        if (lane == 0) {
            atomicAdd(total, sum);
        }
    }
}

void launch_reduce_warp_shuffle(const float* x, float* total, int n) {
    int blocks = (n + 2047) / 2048;
    reduce_warp_shuffle<<<blocks, 512>>>(x, total, n);
}
