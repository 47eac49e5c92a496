// The other field of a 2-D FDTD step: column 0 takes the source value of this step, every
// other column the difference of the magnetic field along columns. The branch tests the
// column with the interior arm first (col > 0), and the interior arm updates in place with -=.
#include <cuda_runtime.h>

__global__ void fdtd_field_col0(float* ex, const float* hz, const float* src, float coef,
                                int t, int nrows, int ncols) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < nrows && col < ncols) {
        int at = row * ncols + col;
        if (col > 0)
            ex[at] -= coef * (hz[at] - hz[at - 1]);
        else
            ex[at] = src[t];
    }
}

void launch_fdtd_field_col0(float* ex, const float* hz, const float* src, float coef, int t,
                            int nrows, int ncols) {
    dim3 block(16, 16);
    dim3 grid((ncols + 15) / 16, (nrows + 15) / 16);
    fdtd_field_col0<<<grid, block>>>(ex, hz, src, coef, t, nrows, ncols);
}
