// Per-token cross-entropy from softmax probabilities (B, T, V): a 2-D grid, positions on x and
// batch rows on y; each token reads the probability of its target out of its row.
#include <cuda_runtime.h>

__global__ void nll_btv(float* losses, const float* probs, const int* targets, int B, int T,
                        int V) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int b = blockIdx.y;
    if (t < T && b < B) {
        int ix = targets[b * T + t];
        float p = probs[b * T * V + t * V + ix];
        losses[b * T + t] = -logf(p);
    }
}

void launch_nll_btv(float* losses, const float* probs, const int* targets, int B, int T, int V) {
    dim3 grid((T + 63) / 64, B);
    nll_btv<<<grid, 64>>>(losses, probs, targets, B, T, V);
}
