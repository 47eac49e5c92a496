// Unbiased column variance around a given mean: a grid-stride loop over columns, a register
// accumulator of d * d with d = x - mu[c], divided by rows - 1 at the end.
#include <cuda_runtime.h>

__global__ void column_variance(const float* __restrict__ x, const float* __restrict__ mu,
                                float* __restrict__ var, int rows, int cols) {
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += blockDim.x * gridDim.x) {
        float acc = 0.0f;
        const float m = mu[c];
        for (int r = 0; r < rows; ++r) {
            float d = x[r * cols + c] - m;
            acc += d * d;
        }
        var[c] = acc / (float)(rows - 1);
    }
}

void launch_column_variance(const float* x, const float* mu, float* var, int rows, int cols) {
    column_variance<<<32, 128>>>(x, mu, var, rows, cols);
}
