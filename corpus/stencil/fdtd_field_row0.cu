// One field update of a 2-D FDTD time step: row 0 takes the source value of this step (a
// broadcast of one element of the excitation table), every other row the curl of the
// magnetic field along rows. The branch on the thread's row writes a different element in
// each arm, and the else arm reads the element the then arm writes on row 0.
#include <cuda_runtime.h>

__global__ void fdtd_field_row0(float* ey, const float* hz, const float* fict, float coef,
                                int step, int nx, int ny) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < nx && j < ny) {
        if (i == 0) {
            ey[i * ny + j] = fict[step];
        } else {
            ey[i * ny + j] = ey[i * ny + j] - coef * (hz[i * ny + j] - hz[(i - 1) * ny + j]);
        }
    }
}

void launch_fdtd_field_row0(float* ey, const float* hz, const float* fict, float coef, int step,
                            int nx, int ny) {
    dim3 block(32, 8);
    dim3 grid((ny + 31) / 32, (nx + 7) / 8);
    fdtd_field_row0<<<grid, block>>>(ey, hz, fict, coef, step, nx, ny);
}
