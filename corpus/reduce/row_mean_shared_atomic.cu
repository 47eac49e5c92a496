// Row means: one block per row; every thread adds its strided partial sum into a single
// shared-memory accumulator with a shared atomicAdd, then thread 0 divides by the row length.
#include <cuda_runtime.h>

__global__ void row_mean_shared_atomic(const float* mat, float* means, int rows, int cols) {
    __shared__ float acc;
    if (blockIdx.x >= rows) return;
    if (threadIdx.x == 0) acc = 0.0f;
    __syncthreads();
    float part = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) part += mat[blockIdx.x * cols + c];
    atomicAdd(&acc, part);
    __syncthreads();
    if (threadIdx.x == 0) means[blockIdx.x] = acc / (float)cols;
}

void launch_row_mean(const float* mat, float* means, int rows, int cols) {
    row_mean_shared_atomic<<<rows, 96>>>(mat, means, rows, cols);
}
