// Batched C[b] = A[b] * B[b]^T (both operands row-major with the contraction dimension last):
// threadIdx.x runs along the rows of C here (i), threadIdx.y along its columns (j), blockIdx.z
// is the batch.
#include <cuda_runtime.h>

__global__ void bmm_nt(const float* __restrict__ A, const float* __restrict__ B,
                       float* __restrict__ C, int batch, int M, int N, int K) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    const int b = blockIdx.z;
    if (b < batch && i < M && j < N) {
        const float* a = A + (b * M + i) * K;
        const float* bt = B + (b * N + j) * K;
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) acc += a[k] * bt[k];
        C[(b * M + i) * N + j] = acc;
    }
}

void launch_bmm_nt(const float* A, const float* B, float* C, int batch, int M, int N, int K) {
    dim3 block(8, 32);
    dim3 grid((M + 7) / 8, (N + 31) / 32, batch);
    bmm_nt<<<grid, block>>>(A, B, C, batch, M, N, K);
}
