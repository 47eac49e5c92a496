// C = alpha * A * B + beta * C with 32x32 shared-memory tiles (1024-thread blocks) and a
// constexpr tile size.
#include <cuda_runtime.h>

__global__ void sgemm_tiled32(int M, int N, int K, float alpha, const float* __restrict__ A,
                              const float* __restrict__ B, float beta, float* __restrict__ C) {
    constexpr int TS = 32;
    __shared__ float sA[TS][TS];
    __shared__ float sB[TS][TS];
    const int i = blockIdx.y * TS + threadIdx.y;
    const int j = blockIdx.x * TS + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TS) {
        if (i < M && k0 + threadIdx.x < K) {
            sA[threadIdx.y][threadIdx.x] = A[i * K + k0 + threadIdx.x];
        } else {
            sA[threadIdx.y][threadIdx.x] = 0.0f;
        }
        if (j < N && k0 + threadIdx.y < K) {
            sB[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * N + j];
        } else {
            sB[threadIdx.y][threadIdx.x] = 0.0f;
        }
        __syncthreads();
        for (int kk = 0; kk < TS; kk++) {
            acc = fmaf(sA[threadIdx.y][kk], sB[kk][threadIdx.x], acc);
        }
        __syncthreads();
    }
    if (i < M && j < N) {
        C[i * N + j] = alpha * acc + beta * C[i * N + j];
    }
}

void launch_sgemm_tiled32(int M, int N, int K, float alpha, const float* A, const float* B,
                          float beta, float* C) {
    dim3 block(32, 32);
    dim3 grid((N + 31) / 32, (M + 31) / 32);
    sgemm_tiled32<<<grid, block>>>(M, N, K, alpha, A, B, beta, C);
}
