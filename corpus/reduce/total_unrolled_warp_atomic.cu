// Total of a vector with an unrolled grid-stride loop: each thread keeps two running sums in a
// local array (the element and the one a grid's width further on each trip), folds them, and
// every warp adds its shuffle-reduced sum to the total with one atomicAdd (no shared memory).
#include <cuda_runtime.h>

#define PAIRS 2

__device__ float lane_fold(float s) {
    for (int d = 16; d > 0; d >>= 1) s += __shfl_xor_sync(0xffffffff, s, d);
    return s;
}

__global__ void total_unrolled_warp_atomic(const float* src, float* total, int m) {
    const int width = gridDim.x * blockDim.x;
    float part[PAIRS];
    for (int q = 0; q < PAIRS; q++) part[q] = 0.0f;
    for (int at = blockIdx.x * blockDim.x + threadIdx.x; at < m; at += PAIRS * width) {
        for (int q = 0; q < PAIRS; q++) {
            int e = at + q * width;
            if (e < m) part[q] += src[e];
        }
    }
    float s = lane_fold(part[0] + part[1]);
    if ((threadIdx.x & 31) == 0) atomicAdd(total, s);
}

void launch_total_unrolled_warp_atomic(const float* src, float* total, int m) {
    int blocks = (m + 127) / 128;
    total_unrolled_warp_atomic<<<blocks < 10 ? blocks : 10, 128>>>(src, total, m);
}
