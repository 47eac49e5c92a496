// One explicit heat-diffusion step on a 2-D grid with clamped (replicated) boundaries:
// t' = t + k * (north + south + east + west - 4 t) + power. Neighbour indices are clamped with
// min/max; the grid is 2-D with 32 x 4 blocks.
#include <cuda_runtime.h>

__global__ void heat_step(float* __restrict__ t_out, const float* __restrict__ t_in,
                          const float* __restrict__ power, float k, int rows, int cols) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) {
        int n = max(r - 1, 0);
        int s = min(r + 1, rows - 1);
        int w = max(c - 1, 0);
        int e = min(c + 1, cols - 1);
        float center = t_in[r * cols + c];
        float lap = t_in[n * cols + c] + t_in[s * cols + c] + t_in[r * cols + w] +
                    t_in[r * cols + e] - 4.0f * center;
        t_out[r * cols + c] = center + k * lap + power[r * cols + c];
    }
}

void launch_heat_step(float* t_out, const float* t_in, const float* power, float k, int rows,
                      int cols) {
    dim3 block(32, 4);
    dim3 grid((cols + 31) / 32, (rows + 3) / 4);
    heat_step<<<grid, block>>>(t_out, t_in, power, k, rows, cols);
}
