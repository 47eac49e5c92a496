// Evaluates a cubic polynomial with coefficients from global memory at every element, through a
// __device__ helper (Horner's scheme).
#include <cuda_runtime.h>

__device__ __forceinline__ float horner3(float x, float c0, float c1, float c2, float c3) {
    float acc = c3;
    acc = acc * x + c2;
    acc = acc * x + c1;
    acc = acc * x + c0;
    return acc;
}

__global__ void poly_eval(const float* __restrict__ xs, const float* __restrict__ coeffs,
                          float* __restrict__ ys, int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (unsigned int)n) {
        ys[i] = horner3(xs[i], coeffs[0], coeffs[1], coeffs[2], coeffs[3]);
    }
}

void launch_poly_eval(const float* xs, const float* coeffs, float* ys, int n) {
    poly_eval<<<(n + 191) / 192, 192>>>(xs, coeffs, ys, n);
}
