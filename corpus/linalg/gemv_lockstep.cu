// y = A x, a thread per row; the column and the flat element offset advance together
// (for (int j = 0, p = row * n; j < n; ++j, ++p)).
#include <cuda_runtime.h>

__global__ void gemv_lockstep(float* y, const float* A, const float* x, int m, int n) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m) {
        float acc = 0.0f;
        for (int j = 0, p = row * n; j < n; ++j, ++p) acc += A[p] * x[j];
        y[row] = acc;
    }
}

void launch_gemv_lockstep(float* y, const float* A, const float* x, int m, int n) {
    gemv_lockstep<<<(m + 127) / 128, 128>>>(y, A, x, m, n);
}
