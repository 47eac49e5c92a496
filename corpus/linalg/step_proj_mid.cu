// One time step per launch of a sequence projection: y[b][t][n] = sum_k x[b][t][k] * W[n][k] + bias[n]
// with the step t an argument fixing the middle dim, the weight stored [N, K] (transposed
// operand); 16 x 16 blocks, batch on threadIdx.y, combined guard.
#include <cuda_runtime.h>

#define BS 16

__global__ void step_projection(const float* x, const float* W, const float* bias, float* y,
                                int B, int T, int K, int N, int t) {
    int n = blockIdx.x * BS + threadIdx.x;
    int b = blockIdx.y * BS + threadIdx.y;
    if (b < B && n < N) {
        float s = 0.0f;
        for (int k = 0; k < K; k++) s += x[(b * T + t) * K + k] * W[n * K + k];
        y[(b * T + t) * N + n] = s + bias[n];
    }
}

void launch_step_projection(const float* x, const float* W, const float* bias, float* y, int B,
                            int T, int K, int N) {
    dim3 block(BS, BS);
    dim3 grid((N + BS - 1) / BS, (B + BS - 1) / BS);
    for (int t = 0; t < T; t++) step_projection<<<grid, block>>>(x, W, bias, y, B, T, K, N, t);
}
