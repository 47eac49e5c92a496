// Row maxima with one warp per row: block is 32 x 4 (threadIdx.y selects the row within the
// block), lanes stride over the columns, then a butterfly __shfl_xor_sync reduction.
#include <cuda_runtime.h>

__global__ void row_max_warp(const float* __restrict__ in, float* __restrict__ rowmax, int rows,
                             int cols) {
    int row = blockIdx.x * blockDim.y + threadIdx.y;
    if (row >= rows) return;
    int lane = threadIdx.x;
    float m = -3.402823466e38f;
    for (int c = lane; c < cols; c += 32) {
        m = fmaxf(m, in[row * cols + c]);
    }
    for (int mask = 16; mask >= 1; mask >>= 1) {
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, mask));
    }
    if (lane == 0) rowmax[row] = m;
}

void launch_row_max_warp(const float* in, float* rowmax, int rows, int cols) {
    dim3 block(32, 4);
    dim3 grid((rows + 3) / 4);
    row_max_warp<<<grid, block>>>(in, rowmax, rows, cols);
}
