// Shared-memory SGEMM that moves its operand pointers: A, B and C are advanced to the block's
// tile first, then A += TILE and B += TILE * N after each K-tile (partial tiles zero-filled).
#include <cuda_runtime.h>

#define TILE 16

__global__ void sgemm_bump_tiles(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int ty = threadIdx.y, tx = threadIdx.x;
    const int r0 = blockIdx.y * TILE, c0 = blockIdx.x * TILE;
    A += r0 * K;
    B += c0;
    C += r0 * N + c0;
    float acc = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        As[ty][tx] = (r0 + ty < M && t + tx < K) ? A[ty * K + tx] : 0.0f;
        Bs[ty][tx] = (t + ty < K && c0 + tx < N) ? B[ty * N + tx] : 0.0f;
        __syncthreads();
        A += TILE;
        B += TILE * N;
        for (int k = 0; k < TILE; ++k) {
            acc += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    if (r0 + ty < M && c0 + tx < N) {
        C[ty * N + tx] = acc;
    }
}

void launch_sgemm_bump_tiles(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    sgemm_bump_tiles<<<grid, block>>>(A, B, C, M, N, K);
}
