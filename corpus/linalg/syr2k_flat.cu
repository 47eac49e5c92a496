// C = alpha * (A * B^T + B * A^T) + beta * C (PolyBench syr2k style): the product sums two
// terms per step, each operand read once as a row and once as a column; 2-D grid, #define width.
#include <cuda_runtime.h>

#define NCOLS_K m

__global__ void syr2k_kernel(int n, int m, float alpha, float beta, const float* a,
                             const float* b, float* c) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if ((i < n) && (j < n)) {
        c[i * n + j] *= beta;
        for (int k = 0; k < NCOLS_K; k++) {
            c[i * n + j] += alpha * a[i * NCOLS_K + k] * b[j * NCOLS_K + k] +
                            alpha * b[i * NCOLS_K + k] * a[j * NCOLS_K + k];
        }
    }
}

void launch_syr2k(int n, int m, float alpha, float beta, const float* a, const float* b, float* c) {
    dim3 block(32, 8);
    dim3 grid((n + 31) / 32, (n + 7) / 8);
    syr2k_kernel<<<grid, block>>>(n, m, alpha, beta, a, b, c);
}
