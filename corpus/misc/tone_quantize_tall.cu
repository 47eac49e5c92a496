// Tone mapping and quantisation of an image in blocks taller than 128 threads (4 x 256):
// a tanf curve saturated to [0, 1] with __saturatef, 8-bit codes rounded to nearest even with
// __float2int_rn, quarter-step levels through rintf, and the floor index __float2int_rd.
#include <cuda_runtime.h>

__global__ void tone_quantize(const float* __restrict__ img, int* __restrict__ code,
                              float* __restrict__ level, int* __restrict__ cell, int height,
                              int width) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= height || col >= width) return;
    float v = img[row * width + col];
    float tone = __saturatef(0.5f + 0.5f * tanf(0.7f * v));
    code[row * width + col] = __float2int_rn(tone * 255.0f);
    level[row * width + col] = 0.25f * rintf(4.0f * v);
    cell[row * width + col] = __float2int_rd(v * 1.5f);
}

void launch_tone_quantize(const float* img, int* code, float* level, int* cell, int height,
                          int width) {
    dim3 block(4, 256);
    dim3 grid((width + 3) / 4, (height + 255) / 256);
    tone_quantize<<<grid, block>>>(img, code, level, cell, height, width);
}
