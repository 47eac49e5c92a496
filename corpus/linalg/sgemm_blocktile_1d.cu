// SGEMM with 1-D register blocking: a 512-thread block computes a 64 x 64 tile of C, staging
// 64 x 8 slices of A and 8 x 64 slices of B in shared memory; each thread accumulates a column of
// TM = 8 results in a local array. Loads are zero-filled outside the matrices.
#include <cuda_runtime.h>

#define BM 64
#define BN 64
#define BK 8
#define TM 8

__global__ void __launch_bounds__((BM * BN) / TM)
    sgemm_blocktile_1d(int M, int N, int K, const float* A, const float* B, float* C) {
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    const int cRow = blockIdx.y;
    const int cCol = blockIdx.x;
    const int threadCol = threadIdx.x % BN;
    const int threadRow = threadIdx.x / BN;
    const int innerColA = threadIdx.x % BK;
    const int innerRowA = threadIdx.x / BK;
    const int innerColB = threadIdx.x % BN;
    const int innerRowB = threadIdx.x / BN;

    float threadResults[TM] = {0.0f};
    for (int bk = 0; bk < K; bk += BK) {
        const int ar = cRow * BM + innerRowA;
        const int ac = bk + innerColA;
        As[innerRowA * BK + innerColA] = (ar < M && ac < K) ? A[ar * K + ac] : 0.0f;
        const int br = bk + innerRowB;
        const int bc = cCol * BN + innerColB;
        Bs[innerRowB * BN + innerColB] = (br < K && bc < N) ? B[br * N + bc] : 0.0f;
        __syncthreads();
        for (int dot = 0; dot < BK; ++dot) {
            const float b = Bs[dot * BN + threadCol];
            for (int r = 0; r < TM; ++r) {
                threadResults[r] += As[(threadRow * TM + r) * BK + dot] * b;
            }
        }
        __syncthreads();
    }
    for (int r = 0; r < TM; ++r) {
        const int row = cRow * BM + threadRow * TM + r;
        const int col = cCol * BN + threadCol;
        if (row < M && col < N) {
            C[row * N + col] = threadResults[r];
        }
    }
}

void launch_sgemm_blocktile_1d(int M, int N, int K, const float* A, const float* B, float* C) {
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    dim3 block((BM * BN) / TM);
    sgemm_blocktile_1d<<<grid, block>>>(M, N, K, A, B, C);
}
