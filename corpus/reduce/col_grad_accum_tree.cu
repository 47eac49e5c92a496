// Weight-gradient column sums accumulated onto the gradient: 512 threads per column, an
// unsigned tree halving by shifts, an early return for threads past the row count's tail, and
// the sum added with += by thread 0.
#include <cuda_runtime.h>

__global__ void col_grad_accum(float* __restrict__ grad, const float* __restrict__ g, int n_rows,
                               int n_cols) {
    __shared__ float red[512];
    const int j = blockIdx.x;
    const unsigned t = threadIdx.x;
    float acc = 0.0f;
    int r = t;
    while (r < n_rows) {
        acc += g[(size_t)r * n_cols + j];
        r += blockDim.x;
    }
    red[t] = acc;
    __syncthreads();
    for (unsigned s = blockDim.x >> 1; s > 0; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        __syncthreads();
    }
    if (t != 0) return;
    grad[j] += red[0];
}

void launch_col_grad_accum(float* grad, const float* g, int n_rows, int n_cols) {
    col_grad_accum<<<n_cols, 512>>>(grad, g, n_rows, n_cols);
}
