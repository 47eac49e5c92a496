// Causal attention softmax over (N, T, T) scores, one warp per query row: the row alias
// x = inp + row * T, the reductions bounded by the query position (i <= t), shuffles halving by
// shifts, and the masked tail written as zeros by a ternary.
#include <cuda_runtime.h>
#include <math.h>

__global__ void causal_softmax_alias(float* out, const float* inp, int N, int T) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (warp >= N * T) return;
    int t = warp % T;
    const float* x = inp + warp * T;
    float* y = out + warp * T;
    float mx = -INFINITY;
    for (int i = lane; i <= t; i += 32) mx = fmaxf(mx, x[i]);
    for (int o = 16; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffff, mx, o));
    float s = 0.0f;
    for (int i = lane; i <= t; i += 32) s += expf(x[i] - mx);
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
    for (int i = lane; i < T; i += 32) y[i] = (i <= t) ? expf(x[i] - mx) / s : 0.0f;
}

void launch_causal_softmax_alias(float* out, const float* inp, int N, int T) {
    causal_softmax_alias<<<(N * T * 32 + 255) / 256, 256>>>(out, inp, N, T);
}
