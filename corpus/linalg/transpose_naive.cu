// out (cols x rows) = transpose of in (rows x cols), one thread per element; reads are coalesced,
// writes are strided.
#include <cuda_runtime.h>

__global__ void transpose_naive(float* out, const float* in, int rows, int cols) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;  // column of in
    int y = blockIdx.y * blockDim.y + threadIdx.y;  // row of in
    if (x < cols && y < rows) {
        out[x * rows + y] = in[y * cols + x];
    }
}

void launch_transpose_naive(float* out, const float* in, int rows, int cols) {
    dim3 block(16, 16);
    dim3 grid((cols + 15) / 16, (rows + 15) / 16);
    transpose_naive<<<grid, block>>>(out, in, rows, cols);
}
