// Every sample scaled by one of 8 tap gains chosen by its position modulo 8 (a kernel parameter
// table), grid-stride loop over a fixed grid of 256-thread blocks.
#include <cuda_runtime.h>

__global__ void tap_scale(const float* x, const float* taps, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        y[i] = x[i] * taps[i % 8];
    }
}
