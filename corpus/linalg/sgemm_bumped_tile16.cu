// C = A * B with 16 x 16 tiles in 1-D blocks of 256 threads; the B pointer is bumped before the A pointer each
// trip and the product is stored plainly.  The block's row is blockIdx.y.  No bounds checks: M,
// N and K are multiples of 16.
#include <cuda_runtime.h>

#define TS 16

__global__ void sgemm_bumped_tile16(const float* A, const float* B, float* C, int M, int N,
                                    int K) {
    __shared__ float tA[TS][TS];
    __shared__ float tB[TS][TS];
    const int ty = threadIdx.x / TS;
    const int tx = threadIdx.x % TS;
    A += blockIdx.y * TS * K;
    B += blockIdx.x * TS;
    float acc = 0.0f;
    for (int k = 0; k < K; k += TS) {
        tA[ty][tx] = A[K * ty + tx];
        tB[ty][tx] = B[N * ty + tx];
        __syncthreads();
        B += N * TS;
        A += TS;
        for (int j = 0; j < TS; j++) {
            acc += tA[ty][j] * tB[j][tx];
        }
        __syncthreads();
    }
    C[(blockIdx.y * TS + ty) * N + blockIdx.x * TS + tx] = acc;
}

void launch_sgemm_bumped_tile16(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(TS * TS);
    dim3 grid(N / TS, M / TS);
    sgemm_bumped_tile16<<<grid, block>>>(A, B, C, M, N, K);
}
