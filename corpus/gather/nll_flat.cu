// Negative log-likelihood from probabilities: one thread per row picks its target's probability
// out of the flat row-major matrix, loss[i] = -log(probs[i * V + targets[i]]).
#include <cuda_runtime.h>

__global__ void nll_flat(float* loss, const float* probs, const int* targets, int N, int V) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        loss[i] = -logf(probs[i * V + targets[i]]);
    }
}

void launch_nll_flat(float* loss, const float* probs, const int* targets, int N, int V) {
    nll_flat<<<(N + 255) / 256, 256>>>(loss, probs, targets, N, V);
}
