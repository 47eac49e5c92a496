// Mean of each row of a row-major double matrix, one thread per row, double accumulator and a
// double literal scale; rows along blockDim.x * blockIdx.x + threadIdx.x.
#include <cuda_runtime.h>

typedef double real_t;

__global__ void row_mean_f64(const real_t* mat, real_t* means, int rows, int cols) {
    int row = blockDim.x * blockIdx.x + threadIdx.x;
    if (row >= rows) return;
    real_t acc = 0.0;
    for (int col = 0; col < cols; col++) acc += mat[row * cols + col];
    means[row] = acc * (1.0 / cols);
}

void launch_row_mean_f64(const real_t* mat, real_t* means, int rows, int cols) {
    dim3 block(64);
    dim3 grid((rows + 63) / 64);
    row_mean_f64<<<grid, block>>>(mat, means, rows, cols);
}
