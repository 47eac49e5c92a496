// Row softmax with one warp per row (8 warps per 256-thread block): max and sum are reduced with
// __shfl_down_sync and broadcast from lane 0 with __shfl_sync; exponentials use __expf.
#include <cuda_runtime.h>

__device__ __forceinline__ float warp_max(float v) {
    for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffff, v, off));
    return __shfl_sync(0xffffffff, v, 0);
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
    return __shfl_sync(0xffffffff, v, 0);
}

__global__ void softmax_warp(float* __restrict__ probs, const float* __restrict__ logits, int N,
                             int C) {
    const int warps_per_block = blockDim.x / 32;
    const int row = blockIdx.x * warps_per_block + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row < N) {
        const float* x = logits + row * C;
        float m = -3.402823466e38f;
        for (int c = lane; c < C; c += 32) m = fmaxf(m, x[c]);
        m = warp_max(m);
        float s = 0.0f;
        for (int c = lane; c < C; c += 32) s += __expf(x[c] - m);
        s = warp_sum(s);
        float* y = probs + row * C;
        for (int c = lane; c < C; c += 32) y[c] = __expf(x[c] - m) / s;
    }
}

void launch_softmax_warp(float* probs, const float* logits, int N, int C) {
    softmax_warp<<<(N + 7) / 8, 256>>>(probs, logits, N, C);
}
