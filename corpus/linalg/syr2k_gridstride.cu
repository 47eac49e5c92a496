// syr2k with one flat grid-stride loop over the n x n result: the column is the fast index, a
// register accumulator takes the two products of each step as separate statements, and the
// scales are applied once at the end (c = alpha * acc + beta * c).
#include <cuda_runtime.h>

__global__ void syr2k_gs(const float* __restrict__ A, const float* __restrict__ B,
                         float* __restrict__ C, float alpha, float beta, int N, int K) {
    for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < N * N;
         idx += gridDim.x * blockDim.x) {
        int row = idx / N;
        int col = idx % N;
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += A[row * K + k] * B[col * K + k];
            acc += B[row * K + k] * A[col * K + k];
        }
        C[idx] = alpha * acc + beta * C[idx];
    }
}

void launch_syr2k_gs(const float* A, const float* B, float* C, float alpha, float beta, int N,
                     int K) {
    syr2k_gs<<<64, 128>>>(A, B, C, alpha, beta, N, K);
}
