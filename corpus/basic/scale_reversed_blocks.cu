// Elementwise scale on a 1-D grid whose blocks run in reverse order: the block number is
// gridDim.x - 1 - blockIdx.x, declared before a shared-free body with an early return.
#include <cuda_runtime.h>

__global__ void scale_reversed_blocks(float* y, const float* x, float a, int n) {
    const int blk = gridDim.x - 1 - blockIdx.x;
    int i = blk * blockDim.x + threadIdx.x;
    if (i >= n) return;
    y[i] = a * x[i];
}

void launch_scale_reversed_blocks(float* y, const float* x, float a, int n) {
    scale_reversed_blocks<<<(n + 255) / 256, 256>>>(y, x, a, n);
}
