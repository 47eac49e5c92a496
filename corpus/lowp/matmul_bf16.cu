// C = A * B on bf16 storage with fp32 accumulation; one thread per output on 32 x 8 blocks.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

__global__ void matmul_bf16(__nv_bfloat16* C, const __nv_bfloat16* A, const __nv_bfloat16* B,
                            int M, int N, int K) {
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    int m = blockIdx.y * blockDim.y + threadIdx.y;
    if (m < M && n < N) {
        float acc = 0.f;
        for (int k = 0; k < K; ++k) {
            acc += __bfloat162float(A[m * K + k]) * __bfloat162float(B[k * N + n]);
        }
        C[m * N + n] = __float2bfloat16(acc);
    }
}

void launch_matmul_bf16(__nv_bfloat16* C, const __nv_bfloat16* A, const __nv_bfloat16* B, int M,
                        int N, int K) {
    dim3 block(32, 8);
    dim3 grid((N + 31) / 32, (M + 7) / 8);
    matmul_bf16<<<grid, block>>>(C, A, B, M, N, K);
}
