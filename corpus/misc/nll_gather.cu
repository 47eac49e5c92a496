// Cross-entropy from probabilities (llm.c style): losses[b, t] = -log(probs[b, t, targets[b, t]]).
// One thread per (b, t) position; each reads one element of its probability row, picked by an
// int32 target: a gather, so a port needs 4 bytes of each V-element row, not the row.
#include <cuda_runtime.h>

__global__ void crossentropy_forward(float* losses, const float* probs, const int* targets,
                                     int B, int T, int V) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= B * T) return;
    int ix = targets[idx];
    losses[idx] = -logf(probs[idx * V + ix]);
}

void launch_crossentropy_forward(float* losses, const float* probs, const int* targets, int B,
                                 int T, int V) {
    const int block_size = 64;
    crossentropy_forward<<<(B * T + block_size - 1) / block_size, block_size>>>(
        losses, probs, targets, B, T, V);
}
