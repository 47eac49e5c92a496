// Column sums, a thread per column: the row counter and the element offset (one row further
// each step) move together in one for statement (++r, p += cols).
#include <cuda_runtime.h>

__global__ void col_sum_lockstep(float* sums, const float* m, int rows, int cols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < cols) {
        float s = 0.0f;
        for (int r = 0, p = col; r < rows; ++r, p += cols) s += m[p];
        sums[col] = s;
    }
}

void launch_col_sum_lockstep(float* sums, const float* m, int rows, int cols) {
    col_sum_lockstep<<<(cols + 255) / 256, 256>>>(sums, m, rows, cols);
}
