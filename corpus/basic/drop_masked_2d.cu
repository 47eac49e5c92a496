// y[r, c] = a[r, c] - 1 where mask[r, c] != 0, on a 2-D grid of 32x4 blocks.  One early return
// joins the bounds checks and the mask test with ||: mask is read only inside the matrix.
#include <cuda_runtime.h>

__global__ void drop_masked_2d(float* y, const float* a, const int* mask, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r >= rows || c >= cols || mask[r * cols + c] == 0) return;
    y[r * cols + c] = a[r * cols + c] - 1.0f;
}

void launch_drop_masked_2d(float* y, const float* a, const int* mask, int rows, int cols) {
    dim3 block(32, 4);
    dim3 grid((cols + 31) / 32, (rows + 3) / 4);
    drop_masked_2d<<<grid, block>>>(y, a, mask, rows, cols);
}
