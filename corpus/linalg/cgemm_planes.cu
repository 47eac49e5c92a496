// Complex matrix product on split real/imaginary planes: each output plane sums two real
// products per step (re = ar*br - ai*bi, im = ar*bi + ai*br).  Rows on threadIdx.x, 16 x 16
// blocks, early return.
#include <cuda_runtime.h>

#define TILE 16

__global__ void cgemm_planes(const float* ar, const float* ai, const float* br, const float* bi,
                             float* cr, float* ci, int rows, int inner, int cols) {
    int r = blockIdx.x * TILE + threadIdx.x;
    int s = blockIdx.y * TILE + threadIdx.y;
    if (r >= rows || s >= cols) return;
    float re = 0.0f, im = 0.0f;
    for (int t = 0; t < inner; t++) {
        float xr = ar[r * inner + t], xi = ai[r * inner + t];
        float yr = br[t * cols + s], yi = bi[t * cols + s];
        re += xr * yr - xi * yi;
        im += xr * yi + xi * yr;
    }
    cr[r * cols + s] = re;
    ci[r * cols + s] = im;
}

void launch_cgemm_planes(const float* ar, const float* ai, const float* br, const float* bi,
                         float* cr, float* ci, int rows, int inner, int cols) {
    dim3 block(TILE, TILE);
    dim3 grid((rows + TILE - 1) / TILE, (cols + TILE - 1) / TILE);
    cgemm_planes<<<grid, block>>>(ar, ai, br, bi, cr, ci, rows, inner, cols);
}
