// Each output adds the element and the tap number over ntap taps, the bound spelled inclusively
// (t <= ntap - 1) and passed at run time; 2-D block, both dims guarded in one condition.
#include <cuda_runtime.h>

__global__ void tap_bias_inclusive(int ntap, float* dst, const float* src, int h, int w) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < h && col < w) {
        float total = 0.0f;
        for (int t = 0; t <= ntap - 1; ++t) {
            total = total + (src[row * w + col] + t);
        }
        dst[row * w + col] = total;
    }
}

void go(int ntap, float* dst, const float* src, int h, int w) {
    dim3 block(32, 8);
    dim3 grid((w + 31) / 32, (h + 7) / 8);
    tap_bias_inclusive<<<grid, block>>>(ntap, dst, src, h, w);
}
