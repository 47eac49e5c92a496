// Each element scaled by a sum of ramp weights: the loop index is only used as a value,
// (float)(k + 1), and the element is read inside the loop although it does not move.
#include <cuda_runtime.h>

#define TAPS 3

__device__ float ramp_sum(const float* x) {
    float s = 0.0f;
    for (int k = 0; k < TAPS; ++k) s += x[0] * (float)(k + 1);
    return s;
}

__global__ void ramp_weighted_taps(int rows, int cols, const float* src, float* dst) {
    const int r = blockIdx.y * 4 + threadIdx.x / 32;
    const int c = blockIdx.x * 32 + threadIdx.x % 32;
    if (r < rows && c < cols) dst[r * cols + c] = ramp_sum(&src[r * cols + c]);
}

void launch(int rows, int cols, const float* src, float* dst) {
    dim3 grid((cols + 31) / 32, (rows + 3) / 4);
    ramp_weighted_taps<<<grid, 128>>>(rows, cols, src, dst);
}
