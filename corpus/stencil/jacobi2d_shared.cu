// One Jacobi sweep of a 5-point stencil: interior points become 0.2 * (centre + 4 neighbours),
// boundary points are copied. Each 16x16 block stages an 18x18 tile (with a one-cell halo) in
// shared memory through a cooperative strided load loop.
#include <cuda_runtime.h>

#define BX 16
#define BY 16

__global__ void jacobi2d_shared(const float* a, float* b, int ny, int nx) {
    __shared__ float tile[BY + 2][BX + 2];
    const int gx0 = blockIdx.x * BX - 1;
    const int gy0 = blockIdx.y * BY - 1;
    const int t = threadIdx.y * BX + threadIdx.x;
    for (int k = t; k < (BX + 2) * (BY + 2); k += BX * BY) {
        int ly = k / (BX + 2);
        int lx = k % (BX + 2);
        int gy = gy0 + ly;
        int gx = gx0 + lx;
        tile[ly][lx] = (gy >= 0 && gy < ny && gx >= 0 && gx < nx) ? a[gy * nx + gx] : 0.0f;
    }
    __syncthreads();

    const int x = blockIdx.x * BX + threadIdx.x;
    const int y = blockIdx.y * BY + threadIdx.y;
    if (x < nx && y < ny) {
        const int lx = threadIdx.x + 1;
        const int ly = threadIdx.y + 1;
        if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) {
            b[y * nx + x] = tile[ly][lx];
        } else {
            b[y * nx + x] = 0.2f * (tile[ly][lx] + tile[ly - 1][lx] + tile[ly + 1][lx] +
                                    tile[ly][lx - 1] + tile[ly][lx + 1]);
        }
    }
}

void launch_jacobi2d(const float* a, float* b, int ny, int nx) {
    dim3 block(BX, BY);
    dim3 grid((nx + BX - 1) / BX, (ny + BY - 1) / BY);
    jacobi2d_shared<<<grid, block>>>(a, b, ny, nx);
}
