// Byte quantisation: each value divided by a __constant__ step, rounded half away from zero,
// offset to a byte code (converted to unsigned char: modulo 256 outside [0, 255]) and its
// residual kept in thousandths as a short (truncated toward zero).
#include <cuda_runtime.h>

__constant__ float quant_step = 0.0625f;

__global__ void quantize_bytes(const float *values, unsigned char *codes, short *residual_milli, int count) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= count) return;
    float scaled = roundf(values[idx] / quant_step);
    int level = (int)scaled + 128;
    codes[idx] = (unsigned char)level;
    residual_milli[idx] = (short)((values[idx] - scaled * quant_step) * 1000.0f);
}

void launch_quantize_bytes(const float *values, unsigned char *codes, short *residual_milli, int count) {
    quantize_bytes<<<(count + 127) / 128, 128>>>(values, codes, residual_milli, count);
}
