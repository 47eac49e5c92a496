// Bias gradient by atomics: a 2-D grid over (rows, channels), channel on x, every thread adds
// its element of dout into dbias[channel]; an early return guards both dims.
#include <cuda_runtime.h>

__global__ void bias_grad_atomic(float* dbias, const float* dout, int BT, int OC) {
    const int oc = blockIdx.x * blockDim.x + threadIdx.x;
    const int bt = blockIdx.y * blockDim.y + threadIdx.y;
    if (oc >= OC || bt >= BT) return;
    atomicAdd(dbias + oc, dout[bt * OC + oc]);
}

void launch_bias_grad_atomic(float* dbias, const float* dout, int BT, int OC) {
    dim3 block(32, 8);
    dim3 grid((OC + 31) / 32, (BT + 7) / 8);
    bias_grad_atomic<<<grid, block>>>(dbias, dout, BT, OC);
}
