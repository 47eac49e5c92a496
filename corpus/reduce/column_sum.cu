// Column sums of a row-major rows x cols matrix: one thread per column walks down the rows.
#include <cuda_runtime.h>

__global__ void column_sum(const float* mat, float* colsum, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) {
        float acc = 0.0f;
        for (int r = 0; r < rows; ++r) {
            acc += mat[r * cols + c];
        }
        colsum[c] = acc;
    }
}

void launch_column_sum(const float* mat, float* colsum, int rows, int cols) {
    column_sum<<<(cols + 127) / 128, 128>>>(mat, colsum, rows, cols);
}
