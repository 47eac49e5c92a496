// Causal softmax with one thread per (batch, query, head) row of a (B, NH, T, T) tensor: the
// row's position is split from the flat thread index with / and %, row pointers are aliases
// built from the split indices, the exponentials are stored during the sum and read back by a
// normalising loop over the whole row that zeroes the masked part in its else branch.
#include <cuda_runtime.h>
#include <float.h>

__global__ void causal_softmax_thread_row(float* att, const float* preatt, int B, int T, int NH) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < B * T * NH) {
        int h = idx % NH;
        int t = (idx / NH) % T;
        int b = idx / (NH * T);
        const float* src = preatt + b * NH * T * T + h * T * T + t * T;
        float* dst = att + b * NH * T * T + h * T * T + t * T;
        float hi = -FLT_MAX;
        for (int k = 0; k <= t; k++) {
            if (src[k] > hi) {
                hi = src[k];
            }
        }
        float total = 0.0f;
        for (int k = 0; k <= t; k++) {
            float e = expf(src[k] - hi);
            total += e;
            dst[k] = e;
        }
        float inv = total == 0.0f ? 0.0f : 1.0f / total;
        for (int k = 0; k < T; k++) {
            if (k <= t) {
                dst[k] *= inv;
            } else {
                dst[k] = 0.0f;
            }
        }
    }
}

void launch_causal_softmax_thread_row(float* att, const float* preatt, int B, int T, int NH) {
    int rows = B * T * NH;
    causal_softmax_thread_row<<<(rows + 127) / 128, 128>>>(att, preatt, B, T, NH);
}
