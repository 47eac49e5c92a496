// tmp = alpha * A * B (PolyBench 2mm first step) with rows along threadIdx.x and columns along
// threadIdx.y, the output zeroed in global memory before the sum, and the scale applied to the
// first operand inside parentheses.
#include <cuda_runtime.h>

__global__ void mm_scaled(const float* A, const float* B, float* tmp, int NI, int NJ, int NK,
                          float alpha) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= NI || j >= NJ) {
        return;
    }
    tmp[i * NJ + j] = 0.0f;
    for (int k = 0; k < NK; ++k) {
        tmp[i * NJ + j] += (alpha * A[i * NK + k]) * B[k * NJ + j];
    }
}

void launch_mm_scaled(const float* A, const float* B, float* tmp, int ni, int nj, int nk,
                      float alpha) {
    dim3 block(16, 16);
    dim3 grid((ni + 15) / 16, (nj + 15) / 16);
    mm_scaled<<<grid, block>>>(A, B, tmp, ni, nj, nk, alpha);
}
