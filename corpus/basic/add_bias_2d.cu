// out[row, col] = in[row, col] + bias[col] over a 2-D grid of 16x16 blocks.
#include <cuda_runtime.h>

__global__ void add_bias_2d(float* out, const float* in, const float* bias, int M, int N) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        out[row * N + col] = in[row * N + col] + bias[col];
    }
}

void launch_add_bias_2d(float* out, const float* in, const float* bias, int M, int N) {
    dim3 block(16, 16);
    dim3 grid((N + block.x - 1) / block.x, (M + block.y - 1) / block.y);
    add_bias_2d<<<grid, block>>>(out, in, bias, M, N);
}
