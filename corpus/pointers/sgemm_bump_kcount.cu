// SGEMM with 32x32 tiles whose K loop counts tiles (kt = 0, 1, ...) and bumps the operand
// pointers at the end of each trip; the pointers start at the block's row and column.
#include <cuda_runtime.h>

template <int BK>
__global__ void sgemm_bump_kcount(int M, int N, int K, const float* a, const float* b, float* c) {
    __shared__ float sa[BK][BK];
    __shared__ float sb[BK][BK];
    int lx = threadIdx.x;
    int ly = threadIdx.y;
    int row = blockIdx.y * BK + ly;
    int col = blockIdx.x * BK + lx;
    const float* pa = a + blockIdx.y * BK * K;
    const float* pb = b + blockIdx.x * BK;
    float s = 0.0f;
    for (int kt = 0; kt < (K + BK - 1) / BK; kt++) {
        sa[ly][lx] = (row < M && kt * BK + lx < K) ? pa[ly * K + lx] : 0.0f;
        sb[ly][lx] = (kt * BK + ly < K && col < N) ? pb[ly * N + lx] : 0.0f;
        __syncthreads();
        for (int k = 0; k < BK; k++) {
            s = fmaf(sa[ly][k], sb[k][lx], s);
        }
        __syncthreads();
        pa += BK;
        pb += BK * N;
    }
    if (row < M && col < N) c[row * N + col] = s;
}

void launch_sgemm_bump_kcount(int M, int N, int K, const float* a, const float* b, float* c) {
    dim3 block(32, 32);
    dim3 grid((N + 31) / 32, (M + 31) / 32);
    sgemm_bump_kcount<32><<<grid, block>>>(M, N, K, a, b, c);
}
