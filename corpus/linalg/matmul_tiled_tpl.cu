// C = A * B with tile sizes as template parameters: a TS x TS output tile per block of TS x TS
// threads, and K-slabs of KS columns (each thread loads KS / TS elements of each operand per
// slab). Launched as matmul_tpl<16, 32>.
#include <cuda_runtime.h>

template <int TS, int KS>
__global__ void matmul_tpl(const float* __restrict__ A, const float* __restrict__ B,
                           float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[TS][KS];
    __shared__ float Bs[KS][TS];
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int row = blockIdx.y * TS + ty;
    const int col = blockIdx.x * TS + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += KS) {
#pragma unroll
        for (int r = 0; r < KS / TS; ++r) {
            const int ak = k0 + r * TS + tx;
            As[ty][r * TS + tx] = (row < M && ak < K) ? A[row * K + ak] : 0.0f;
            const int bk = k0 + r * TS + ty;
            Bs[r * TS + ty][tx] = (bk < K && col < N) ? B[bk * N + col] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < KS; ++kk) {
            acc += As[ty][kk] * Bs[kk][tx];
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        C[row * N + col] = acc;
    }
}

void launch_matmul_tpl(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(16, 16);
    dim3 grid((N + 15) / 16, (M + 15) / 16);
    matmul_tpl<16, 32><<<grid, block>>>(A, B, C, M, N, K);
}
