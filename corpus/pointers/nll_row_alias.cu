// Negative log-likelihood: a per-row alias indexed with data (probs_row[targets[i]]).
#include <cuda_runtime.h>

__global__ void nll_row_alias(float* losses, const float* probs, const int* targets, int B, int V) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < B) {
        const float* probs_row = probs + i * V;
        int ix = targets[i];
        losses[i] = -logf(probs_row[ix]);
    }
}

void launch_nll_row_alias(float* losses, const float* probs, const int* targets, int B, int V) {
    nll_row_alias<<<(B + 127) / 128, 128>>>(losses, probs, targets, B, V);
}
