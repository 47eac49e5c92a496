// Causal softmax over a (BH, T, T) tensor with one thread per row taken from a 2-D grid (head
// pairs on blockIdx.y, query rows on x): the maximum by fmaxf, the exponentials written to the
// output while summing, then one loop over the whole row that divides or zeroes with a
// ternary.
#include <cuda_runtime.h>
#include <math.h>

__global__ void causal_softmax_ternary_zero(const float* logits, float* probs, int BH, int T) {
    int q = blockIdx.x * blockDim.x + threadIdx.x;
    int bh = blockIdx.y;
    if (q >= T || bh >= BH) return;
    int base = (bh * T + q) * T;
    float m = -INFINITY;
    for (int j = 0; j < q + 1; ++j) m = fmaxf(m, logits[base + j]);
    float z = 0.0f;
    for (int j = 0; j < q + 1; ++j) {
        probs[base + j] = expf(logits[base + j] - m);
        z += probs[base + j];
    }
    for (int j = 0; j < T; ++j) {
        probs[base + j] = (j <= q) ? probs[base + j] / z : 0.0f;
    }
}

void launch_causal_softmax_ternary_zero(const float* logits, float* probs, int BH, int T) {
    dim3 grid((T + 63) / 64, BH);
    causal_softmax_ternary_zero<<<grid, 64>>>(logits, probs, BH, T);
}
