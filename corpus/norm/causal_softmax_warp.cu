// Causal attention softmax over [BH, T, T] scores: one warp per query row t, lanes fold the
// visible keys s <= t into online (max, sum) pairs which are merged with __shfl_xor_sync;
// masked positions are written as 0.
#include <cfloat>
#include <cuda_runtime.h>

__global__ void causal_softmax_warp(float* probs, const float* att, int BH, int T, float scale) {
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (row >= BH * T) return;
    int t = row % T;
    const float* x = att + row * T;

    float m = -FLT_MAX;
    float d = 0.0f;
    for (int s = lane; s <= t; s += 32) {
        float v = x[s] * scale;
        float mn = fmaxf(m, v);
        d = d * expf(m - mn) + expf(v - mn);
        m = mn;
    }
    for (int off = 16; off > 0; off >>= 1) {
        float m_other = __shfl_xor_sync(0xffffffff, m, off);
        float d_other = __shfl_xor_sync(0xffffffff, d, off);
        float mn = fmaxf(m, m_other);
        d = d * expf(m - mn) + d_other * expf(m_other - mn);
        m = mn;
    }
    float inv = 1.0f / d;
    float* y = probs + row * T;
    for (int s = lane; s < T; s += 32) {
        y[s] = (s <= t) ? expf(x[s] * scale - m) * inv : 0.0f;
    }
}

void launch_causal_softmax_warp(float* probs, const float* att, int BH, int T, float scale) {
    int threads = BH * T * 32;
    causal_softmax_warp<<<(threads + 127) / 128, 128>>>(probs, att, BH, T, scale);
}
