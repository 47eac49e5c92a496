// SiLU (x * sigmoid(x)) with a grid-stride loop and a block of 1024 threads.
#include <cuda_runtime.h>

__global__ void silu_gridstride(float* __restrict__ y, const float* __restrict__ x, int n) {
    int stride = gridDim.x * blockDim.x;
    for (int idx = threadIdx.x + blockIdx.x * blockDim.x; idx < n; idx += stride) {
        float v = x[idx];
        y[idx] = v / (1.0f + expf(-v));
    }
}

void launch_silu(float* y, const float* x, int n) {
    silu_gridstride<<<4, 1024>>>(y, x, n);
}
