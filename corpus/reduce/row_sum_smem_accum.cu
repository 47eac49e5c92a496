// Row sums, one block per row: the whole body sits under a block-uniform guard on the row (so
// its barriers are reached by every thread of the block or by none); threads accumulate the
// row's block-stride columns in their own shared slot, then a tree folds the slots.
#include <cuda_runtime.h>

__global__ void row_sum_smem_accum(const float* mat, float* sums, int rows, int cols) {
    __shared__ float cache[128];
    int row = blockIdx.x;
    if (row < rows) {
        cache[threadIdx.x] = 0.0f;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) {
            cache[threadIdx.x] = cache[threadIdx.x] + mat[row * cols + c];
        }
        __syncthreads();
        for (int stride = blockDim.x >> 1; stride > 0; stride >>= 1) {
            if (threadIdx.x < stride) cache[threadIdx.x] += cache[threadIdx.x + stride];
            __syncthreads();
        }
        if (threadIdx.x == 0) sums[row] = cache[0];
    }
}

void launch_row_sum_smem_accum(const float* mat, float* sums, int rows, int cols) {
    row_sum_smem_accum<<<rows, 128>>>(mat, sums, rows, cols);
}
