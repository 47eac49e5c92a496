// A skewed upwind difference: each cell moves toward its anti-diagonal neighbours two columns
// away, (i + 1) * NC + (j - 2) and (i - 1) * NC + (j + 2), with a #define stride. Rows run along
// threadIdx.x and columns along threadIdx.y; the guard spells both borders with >= and <.
#include <cuda_runtime.h>

#define NC 72

__global__ void advect_skew(int nr, float c, const float* u, float* u_new) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= 1 && i < nr - 1 && j >= 2 && j < NC - 2) {
        u_new[i * NC + j] =
            u[i * NC + j] - c * (u[(i + 1) * NC + (j - 2)] - u[(i - 1) * NC + (j + 2)]);
    }
}

void launch_advect_skew(int nr, float c, const float* u, float* u_new) {
    dim3 block(16, 8);
    dim3 grid((nr + 15) / 16, NC / 8);
    advect_skew<<<grid, block>>>(nr, c, u, u_new);
}
