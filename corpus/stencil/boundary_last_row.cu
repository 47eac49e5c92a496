// Relaxation step with a Dirichlet row at the top of the grid: the last row is pinned to the
// boundary value of this step, every other row moves towards its neighbour below. The value
// is built in a local variable, assigned in both arms of a branch on the thread's row (the
// last one), and stored once after the branch.
#include <cuda_runtime.h>

__global__ void relax_last_row(float* u, const float* w, const float* wall, float rate, int k,
                               int rows, int cols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= rows || col >= cols) return;
    float v = u[row * cols + col];
    if (row == rows - 1)
        v = wall[k];
    else
        v = v + rate * (w[(row + 1) * cols + col] - w[row * cols + col]);
    u[row * cols + col] = v;
}

void launch_relax_last_row(float* u, const float* w, const float* wall, float rate, int k,
                           int rows, int cols) {
    dim3 block(64, 4);
    dim3 grid((cols + 63) / 64, (rows + 3) / 4);
    relax_last_row<<<grid, block>>>(u, w, wall, rate, k, rows, cols);
}
