// Picks each row's logit at its label and scales it (a margin term): rows are split across
// 64-thread blocks, the guard returns early, and the label is read into its own variable.
#include <cuda_runtime.h>

__global__ void pick_label_scaled(float* picked, const float* logits, const int* labels,
                                  int rows, int cols, float scale) {
    int r = threadIdx.x + blockDim.x * blockIdx.x;
    if (r >= rows) return;
    const int lbl = labels[r];
    picked[r] = scale * logits[r * cols + lbl] + 1.0f;
}

void launch_pick_label_scaled(float* picked, const float* logits, const int* labels, int rows,
                              int cols, float scale) {
    pick_label_scaled<<<(rows + 63) / 64, 64>>>(picked, logits, labels, rows, cols, scale);
}
