// Masked, scaled copy of attention scores: a 2-D grid with one block row per (batch, head,
// query) row of a (BH * T, T) matrix, the query position taken as row % T, and the mask
// written as a ternary with the kept side first (key <= query).
#include <cuda_runtime.h>

#define NEG_BIG -1.0e9f

__global__ void causal_mask_rows(const float* __restrict__ logits, float* __restrict__ masked,
                                 float inv_temp, int BH, int T) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y;
    if (col >= T || row >= BH * T) return;
    int q = row % T;
    masked[row * T + col] = (col <= q) ? logits[row * T + col] * inv_temp : NEG_BIG;
}

void launch_causal_mask_rows(const float* logits, float* masked, float inv_temp, int BH, int T) {
    dim3 grid((T + 63) / 64, BH * T);
    causal_mask_rows<<<grid, 64>>>(logits, masked, inv_temp, BH, T);
}
