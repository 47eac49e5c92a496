// Residual add on fp16 storage (the `half` spelling): out = x + residual, computed in fp32 and
// rounded to fp16; 2-D grid over [rows, cols] with a flattened thread index inside the block.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void residual_add_fp16(half* out, const half* x, const half* residual, int rows,
                                  int cols) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y;
    if (row < rows && col < cols) {
        const int i = row * cols + col;
        float s = __half2float(x[i]) + __half2float(residual[i]);
        out[i] = __float2half(s);
    }
}

void launch_residual_add_fp16(half* out, const half* x, const half* residual, int rows, int cols) {
    dim3 grid((cols + 255) / 256, rows);
    residual_add_fp16<<<grid, 256>>>(out, x, residual, rows, cols);
}
