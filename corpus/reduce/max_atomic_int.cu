// Maximum and minimum of an int32 array: per-block values via shared atomicMax/atomicMin, then
// one global atomicMax/atomicMin per block (result[0] = max, result[1] = min, accumulated onto
// their initial contents).
#include <climits>
#include <cuda_runtime.h>

__global__ void max_min_atomic(const int* vals, int* result, int n) {
    __shared__ int bmax;
    __shared__ int bmin;
    if (threadIdx.x == 0) {
        bmax = INT_MIN;
        bmin = INT_MAX;
    }
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicMax(&bmax, vals[i]);
        atomicMin(&bmin, vals[i]);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicMax(&result[0], bmax);
        atomicMin(&result[1], bmin);
    }
}

void launch_max_min_atomic(const int* vals, int* result, int n) {
    max_min_atomic<<<(n + 1023) / 1024, 1024>>>(vals, result, n);
}
