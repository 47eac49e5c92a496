// A flag that some value of a [nrows, 64] __device__ grid was negative, the value made positive
// in place; 2-D grid of 16 x 8 blocks with the column on x.
#include <cuda_runtime.h>
#define NCOL 64
__device__ float grid_vals[512][NCOL];
__device__ int any_neg;
__global__ void flag_negative(int nrows) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < NCOL && row < nrows) {
        float v = grid_vals[row][col];
        if (v < 0.0f) {
            grid_vals[row][col] = -v;
            any_neg = 1;
        }
    }
}
void launch(int nrows) {
    dim3 b(16, 8);
    dim3 g(NCOL / 16, (nrows + 7) / 8);
    flag_negative<<<g, b>>>(nrows);
}
