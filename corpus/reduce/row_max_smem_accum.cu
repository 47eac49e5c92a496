// Row maxima, one block per row: each thread folds its strided columns into its shared slot
// with fmaxf through a row pointer (the slot starts at -INFINITY), then an fmaxf tree.
#include <cuda_runtime.h>
#include <math_constants.h>

__global__ void row_max_smem_accum(const float* __restrict__ x, float* __restrict__ y, int nrows,
                                   int ncols) {
    if (blockIdx.x >= nrows) return;  // the whole block leaves: its barriers are never reached
    __shared__ float best[64];
    const unsigned lane = threadIdx.x;
    const float* rowp = x + (size_t)blockIdx.x * ncols;
    best[lane] = -INFINITY;
    for (unsigned col = lane; col < ncols; col += 64) best[lane] = fmaxf(best[lane], rowp[col]);
    __syncthreads();
    for (unsigned w = 32; w >= 1; w /= 2) {
        if (lane < w) best[lane] = fmaxf(best[lane], best[lane + w]);
        __syncthreads();
    }
    if (lane == 0) y[blockIdx.x] = best[0];
}

void launch_row_max_smem_accum(const float* x, float* y, int nrows, int ncols) {
    row_max_smem_accum<<<nrows, 64>>>(x, y, nrows, ncols);
}
