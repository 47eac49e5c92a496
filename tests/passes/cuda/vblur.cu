// Vertical three-point blur on a 2-D grid with clamped rows.
#include <cuda_runtime.h>

__global__ void vblur(float* out, const float* in, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y;
    if (c < cols && r < rows) {
        int up = max(r - 1, 0);
        int dn = min(r + 1, rows - 1);
        out[r * cols + c] = 0.25f * in[up * cols + c] + 0.5f * in[r * cols + c] + 0.25f * in[dn * cols + c];
    }
}

void launch_vblur(float* out, const float* in, int rows, int cols) {
    vblur<<<dim3((cols + 127) / 128, rows), 128>>>(out, in, rows, cols);
}
