// Accumulation into file-scope __device__ memory: a running sum the host zeroes once and every
// launch adds to, and a counter of the positive inputs bumped through its address.
#include <cuda_runtime.h>

#define MAX_LEN 8192

__device__ float running_sum[MAX_LEN];
__device__ int positive_count;

__global__ void accumulate_scaled(const float* src, float weight, int len) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= len) return;
    float v = src[idx];
    running_sum[idx] += weight * v;
    if (v > 0.0f) atomicAdd(&positive_count, 1);
}

void launch_accumulate_scaled(const float* src, float weight, int len) {
    accumulate_scaled<<<(len + 255) / 256, 256>>>(src, weight, len);
}
