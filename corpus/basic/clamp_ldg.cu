// Clamp to [lo, hi] through the read-only cache (__ldg), 64-thread blocks.
#include <cuda_runtime.h>

__global__ void clamp_ldg(float* __restrict__ y, const float* __restrict__ x, float lo, float hi,
                          int count) {
    int gid = threadIdx.x + blockDim.x * blockIdx.x;
    if (gid < count) {
        float v = __ldg(&x[gid]);
        y[gid] = fminf(fmaxf(v, lo), hi);
    }
}

void launch_clamp_ldg(float* y, const float* x, float lo, float hi, int count) {
    clamp_ldg<<<(count + 63) / 64, 64>>>(y, x, lo, hi, count);
}
