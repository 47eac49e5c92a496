// Causal attention scores for BH heads: S[h, q, k] = scale * dot(Q[h, q, :], K[h, k, :]) for
// k <= q, and -INFINITY above the diagonal. 3-D grid: (key tiles, query tiles, heads).
#include <cuda_runtime.h>
#include <math.h>

__global__ void attention_scores(float* S, const float* Q, const float* K, float scale, int BH,
                                 int T, int D) {
    int kpos = blockIdx.x * blockDim.x + threadIdx.x;
    int qpos = blockIdx.y * blockDim.y + threadIdx.y;
    int h = blockIdx.z;
    if (h >= BH || qpos >= T || kpos >= T) return;
    const float* q = Q + ((size_t)h * T + qpos) * D;
    const float* k = K + ((size_t)h * T + kpos) * D;
    float val;
    if (kpos > qpos) {
        val = -INFINITY;
    } else {
        float dot = 0.0f;
        for (int d = 0; d < D; d++) {
            dot += q[d] * k[d];
        }
        val = dot * scale;
    }
    S[((size_t)h * T + qpos) * T + kpos] = val;
}

void launch_attention_scores(float* S, const float* Q, const float* K, float scale, int BH, int T,
                             int D) {
    dim3 block(16, 16);
    dim3 grid((T + 15) / 16, (T + 15) / 16, BH);
    attention_scores<<<grid, block>>>(S, Q, K, scale, BH, T, D);
}
