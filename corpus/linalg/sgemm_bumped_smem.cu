// SGEMM C = alpha * A * B + beta * C with 32 x 32 shared-memory tiles in 1-D blocks of 1024
// threads.  Each block moves its A, B and C pointers to its own tile, then bumps A and B by one
// K-tile per trip; the block's tile row comes from blockIdx.x.  No bounds checks: M, N and K are
// multiples of 32.
#include <cuda_runtime.h>

#define TILE 32

__global__ void sgemm_bumped_smem(int M, int N, int K, float alpha, const float* A,
                                  const float* B, float beta, float* C) {
    const unsigned int tileRow = blockIdx.x;
    const unsigned int tileCol = blockIdx.y;
    __shared__ float sA[TILE * TILE];
    __shared__ float sB[TILE * TILE];
    const unsigned int col = threadIdx.x % TILE;
    const unsigned int row = threadIdx.x / TILE;

    A += tileRow * TILE * K;
    B += tileCol * TILE;
    C += tileRow * TILE * N + tileCol * TILE;

    float sum = 0.0f;
    for (int kt = 0; kt < K; kt += TILE) {
        sA[row * TILE + col] = A[row * K + col];
        sB[row * TILE + col] = B[row * N + col];
        __syncthreads();
        A += TILE;
        B += TILE * N;
        for (int e = 0; e < TILE; ++e) {
            sum += sA[row * TILE + e] * sB[e * TILE + col];
        }
        __syncthreads();
    }
    C[row * N + col] = alpha * sum + beta * C[row * N + col];
}

void launch_sgemm_bumped_smem(int M, int N, int K, float alpha, const float* A, const float* B,
                              float beta, float* C) {
    dim3 grid((M + TILE - 1) / TILE, (N + TILE - 1) / TILE);
    dim3 block(TILE * TILE);
    sgemm_bumped_smem<<<grid, block>>>(M, N, K, alpha, A, B, beta, C);
}
