// SAXPY in place: y = alpha * x + y.
#include <cuda_runtime.h>

__global__ void saxpy(int n, float alpha, const float* __restrict__ x, float* __restrict__ y) {
    int idx = threadIdx.x + blockIdx.x * blockDim.x;
    if (idx >= n) return;
    y[idx] = alpha * x[idx] + y[idx];
}

void launch_saxpy(int n, float alpha, const float* x, float* y) {
    dim3 block(128);
    dim3 grid((n + 127) / 128);
    saxpy<<<grid, block>>>(n, alpha, x, y);
}
