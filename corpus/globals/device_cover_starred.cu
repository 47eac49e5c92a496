// Matching state kept in __device__ memory between kernels (an assignment solver's style):
// columns with a starred row are covered and counted; the others get a __device__ penalty added
// to their cost.
#include <cuda_runtime.h>

#define CAPACITY 4096

__device__ int star_row[CAPACITY];
__device__ int covered[CAPACITY];
__device__ int matched;
__device__ float penalty;

__global__ void cover_starred(float* cost, int n) {
    int j = threadIdx.x + blockIdx.x * blockDim.x;
    if (j < n) {
        if (star_row[j] >= 0) {
            covered[j] = 1;
            atomicAdd(&matched, 1);
        } else {
            cost[j] += penalty;
        }
    }
}

void launch_cover_starred(float* cost, int n) {
    cover_starred<<<(n + 63) / 64, 64>>>(cost, n);
}
