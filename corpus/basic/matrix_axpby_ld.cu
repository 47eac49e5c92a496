// B = alpha * A + beta * B on the leading rows x cols block of row-major matrices with a
// leading dimension ld >= cols; columns cols..ld-1 are padding and stay untouched.
#include <cuda_runtime.h>

__global__ void matrix_axpby_ld(float alpha, const float* A, float beta, float* B, int rows,
                                int cols, int ld) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r >= rows || c >= cols) {
        return;
    }
    const int off = r * ld + c;
    B[off] = alpha * A[off] + beta * B[off];
}

void launch_matrix_axpby_ld(float alpha, const float* A, float beta, float* B, int rows, int cols,
                            int ld) {
    dim3 threads(32, 8);
    dim3 blocks((cols + 31) / 32, (rows + 7) / 8);
    matrix_axpby_ld<<<blocks, threads>>>(alpha, A, beta, B, rows, cols, ld);
}
