// GEMV, one thread per row, walking the row and the vector with pointers bumped each step
// (pa++ and px += 1).
#include <cuda_runtime.h>

__global__ void gemv_bump_row(float* y, const float* A, const float* x, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* pa = A + (size_t)r * cols;
        const float* px = x;
        float acc = 0.0f;
        for (int j = 0; j < cols; ++j) {
            acc += pa[0] * px[0];
            pa++;
            px += 1;
        }
        y[r] = acc;
    }
}

void launch_gemv_bump_row(float* y, const float* A, const float* x, int rows, int cols) {
    gemv_bump_row<<<(rows + 127) / 128, 128>>>(y, A, x, rows, cols);
}
