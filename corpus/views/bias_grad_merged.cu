// Bias gradient of a linear layer: each thread sums one output channel over every (b, t) row
// of dout, bound (B, T, OC) but walked as B*T rows of OC through a column pointer.
#include <cuda_runtime.h>

__global__ void bias_grad_merged(float* dbias, const float* dout, int B, int T, int OC) {
    int o = blockIdx.x * blockDim.x + threadIdx.x;
    if (o >= OC) return;
    const float* col = dout + o;
    float acc = 0.0f;
    for (int r = 0; r < B * T; r++) {
        acc += col[r * OC];
    }
    dbias[o] += acc;
}

void launch_bias_grad_merged(float* dbias, const float* dout, int B, int T, int OC) {
    bias_grad_merged<<<(OC + 63) / 64, 64>>>(dbias, dout, B, T, OC);
}
