// Naive transpose with one thread per element, its blocks rotated along x by a runtime amount
// (which block handles which tile column changes, the result does not): bx = (blockIdx.x +
// rot) % gridDim.x; guards on both sizes.
#include <cuda_runtime.h>

__global__ void transpose_rotated_rows(float* out, const float* in, int n_rows, int n_cols,
                                       int rot) {
    int bx = (blockIdx.x + rot) % gridDim.x;
    int by = blockIdx.y;
    int col = bx * blockDim.x + threadIdx.x;
    int row = by * blockDim.y + threadIdx.y;
    if (row < n_rows && col < n_cols) {
        out[col * n_rows + row] = in[row * n_cols + col];
    }
}

void launch_transpose_rotated_rows(float* out, const float* in, int n_rows, int n_cols,
                                   int rot) {
    dim3 block(16, 16);
    dim3 grid((n_cols + 15) / 16, (n_rows + 15) / 16);
    transpose_rotated_rows<<<grid, block>>>(out, in, n_rows, n_cols, rot);
}
