// y = A x for a row-major M x K matrix: one thread per row, loads through __ldg.
#include <cuda_runtime.h>

__global__ void gemv_rowwise(const float* __restrict__ A, const float* __restrict__ x,
                             float* __restrict__ y, int M, int K) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= M) return;
    float dot = 0.0f;
    const float* arow = A + (size_t)r * K;
    for (int k = 0; k < K; k++) {
        dot += __ldg(arow + k) * __ldg(x + k);
    }
    y[r] = dot;
}

void launch_gemv(const float* A, const float* x, float* y, int M, int K) {
    gemv_rowwise<<<(M + 127) / 128, 128>>>(A, x, y, M, K);
}
