// 3x3 convolution (PolyBench 2DConvolution style): the row stride is a #define, each tap is a
// flat offset with negative and positive shifts, (i - 1) * NJ + (j + 1); the rows are a
// runtime count and the border is left as it was.
#include <cuda_runtime.h>

#define NJ 96

__global__ void conv3x3_macro(int ni, const float* A, float* B) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;

    float c11 = +0.2f, c21 = +0.5f, c31 = -0.8f;
    float c12 = -0.3f, c22 = +0.6f, c32 = -0.9f;
    float c13 = +0.4f, c23 = +0.7f, c33 = +0.10f;

    if ((i < ni - 1) && (j < NJ - 1) && (i > 0) && (j > 0)) {
        B[i * NJ + j] = c11 * A[(i - 1) * NJ + (j - 1)] + c21 * A[(i - 1) * NJ + (j + 0)] +
                        c31 * A[(i - 1) * NJ + (j + 1)] + c12 * A[(i + 0) * NJ + (j - 1)] +
                        c22 * A[(i + 0) * NJ + (j + 0)] + c32 * A[(i + 0) * NJ + (j + 1)] +
                        c13 * A[(i + 1) * NJ + (j - 1)] + c23 * A[(i + 1) * NJ + (j + 0)] +
                        c33 * A[(i + 1) * NJ + (j + 1)];
    }
}

void launch_conv3x3_macro(int ni, const float* A, float* B) {
    dim3 block(32, 8);
    dim3 grid((NJ + 31) / 32, (ni + 7) / 8);
    conv3x3_macro<<<grid, block>>>(ni, A, B);
}
