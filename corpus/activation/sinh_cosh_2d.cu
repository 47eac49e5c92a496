// Hyperbolic sine and cosine of a scaled matrix, both written out (sinhf / coshf) on a
// 2-D grid with a combined guard; the ratio is the hyperbolic tangent.
#include <cuda_runtime.h>

__global__ void hyperbolic_pair(float* sh, float* th, const float* a, float scale, int rows,
                                int cols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        float v = scale * a[row * cols + col];
        float s = sinhf(v);
        sh[row * cols + col] = s;
        th[row * cols + col] = s / cosh(v);
    }
}

void launch_hyperbolic_pair(float* sh, float* th, const float* a, float scale, int rows,
                            int cols) {
    dim3 block(16, 16);
    dim3 grid((cols + 15) / 16, (rows + 15) / 16);
    hyperbolic_pair<<<grid, block>>>(sh, th, a, scale, rows, cols);
}
