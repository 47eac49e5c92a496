// y = A^T x for a row-major rows x cols matrix A (PolyBench atax/bicg style): one thread per
// column walks down the rows, so neighbouring threads read neighbouring addresses.
#include <cuda_runtime.h>

__global__ void gemv_transposed(const float* A, const float* x, float* y, int rows, int cols) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < cols) {
        y[j] = 0.0f;
        for (int i = 0; i < rows; i++) {
            y[j] += A[i * cols + j] * x[i];
        }
    }
}

void launch_gemv_transposed(const float* A, const float* x, float* y, int rows, int cols) {
    gemv_transposed<<<(cols + 255) / 256, 256>>>(A, x, y, rows, cols);
}
