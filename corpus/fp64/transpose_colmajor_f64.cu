// Out-of-place transpose of a square column-major double matrix: thread x walks rows, y walks
// columns, element (r, c) lives at c * ld + r. NKI has no fp64, so the port is fp32 (C2N2516).
#include <cuda_runtime.h>

#define AT(r, c, ld) ((c) * (ld) + (r))

__global__ void transpose_colmajor_f64(int m, const double* const src, double* const dst) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    const int c = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < m && c < m) {
        dst[AT(r, c, m)] = src[AT(c, r, m)];
    }
}

void launch_transpose_colmajor_f64(int m, const double* src, double* dst) {
    dim3 threads(32, 8);
    dim3 blocks((m + 31) / 32, (m + 7) / 8);
    transpose_colmajor_f64<<<blocks, threads>>>(m, src, dst);
}
