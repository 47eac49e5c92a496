// SGEMM with a 1-D register tile: blocks of 256 threads compute a 32 x 32 tile of C, each thread
// TM = 4 consecutive rows of one column, from 32 x 8 slices of A and 8 x 32 slices of B staged in
// shared memory.  The pointers are moved with `p = p + step` once per K-slice; results are
// written back as alpha * acc + beta * C.  No bounds checks: M and N are multiples of 32, K of 8.
#include <cuda_runtime.h>

#define BM 32
#define BN 32
#define BK 8
#define TM 4

__global__ void sgemm_bumped_rows(int M, int N, int K, float alpha, const float* A,
                                  const float* B, float beta, float* C) {
    const int by = blockIdx.y;
    const int bx = blockIdx.x;
    const int tc = threadIdx.x % BN;
    const int tr = threadIdx.x / BN;
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    A = A + by * BM * K;
    B = B + bx * BN;
    C = C + by * BM * N + bx * BN;
    const int aCol = threadIdx.x % BK;
    const int aRow = threadIdx.x / BK;
    const int bCol = threadIdx.x % BN;
    const int bRow = threadIdx.x / BN;

    float acc[TM] = {0.0f};
    for (int ks = 0; ks < K; ks += BK) {
        As[aRow * BK + aCol] = A[aRow * K + aCol];
        Bs[bRow * BN + bCol] = B[bRow * N + bCol];
        __syncthreads();
        A = A + BK;
        B = B + BK * N;
        for (int d = 0; d < BK; ++d) {
            const float bv = Bs[d * BN + tc];
            for (int r = 0; r < TM; ++r) {
                acc[r] += As[(tr * TM + r) * BK + d] * bv;
            }
        }
        __syncthreads();
    }
    for (int r = 0; r < TM; ++r) {
        C[(tr * TM + r) * N + tc] = alpha * acc[r] + beta * C[(tr * TM + r) * N + tc];
    }
}

void launch_sgemm_bumped_rows(int M, int N, int K, float alpha, const float* A, const float* B,
                              float beta, float* C) {
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    dim3 block((BM * BN) / TM);
    sgemm_bumped_rows<<<grid, block>>>(M, N, K, alpha, A, B, beta, C);
}
