// Cross-entropy loss per row from logits: loss[b] = logsumexp(logits[b, :]) - logits[b, target[b]].
// One thread per row; the target index is an int32 gather.
#include <cuda_runtime.h>

__global__ void cross_entropy_forward(float* losses, const float* logits, const int* targets,
                                      int B, int V) {
    int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < B) {
        const float* row = logits + b * V;
        float maxv = row[0];
        for (int v = 1; v < V; ++v) {
            maxv = fmaxf(maxv, row[v]);
        }
        float sum = 0.0f;
        for (int v = 0; v < V; ++v) {
            sum += expf(row[v] - maxv);
        }
        losses[b] = logf(sum) + maxv - row[targets[b]];
    }
}

void launch_cross_entropy_forward(float* losses, const float* logits, const int* targets, int B,
                                  int V) {
    cross_entropy_forward<<<(B + 31) / 32, 32>>>(losses, logits, targets, B, V);
}
