// Row sums, one block of 128 threads per row (rows on grid y): xor-shuffle warp sums, and the
// last warp's partial added after the loop over the others.
#include <cuda_runtime.h>

#define THREADS 128

__global__ void row_sum_peeled_last(float* sums, const float* mat, int nrows, int ncols) {
    __shared__ float red[THREADS / 32];
    int r = blockIdx.y;
    if (r >= nrows) return;
    float acc = 0.0f;
    for (int j = threadIdx.x; j < ncols; j += THREADS) acc += mat[r * ncols + j];
    for (int off = 16; off >= 1; off /= 2) acc += __shfl_xor_sync(0xffffffff, acc, off);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = 0.0f;
        for (int w = 0; w < THREADS / 32 - 1; ++w) total += red[w];
        total += red[THREADS / 32 - 1];
        sums[r] = total;
    }
}

void launch_row_sum_peeled_last(float* sums, const float* mat, int nrows, int ncols) {
    row_sum_peeled_last<<<dim3(1, nrows), THREADS>>>(sums, mat, nrows, ncols);
}
