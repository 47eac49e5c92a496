// One Jacobi sweep of a 1-D double grid: interior points average their neighbours with the
// centre, the two end points keep their values; a ternary on the thread index chooses.
#include <cuda_runtime.h>

__global__ void jacobi1d_f64(const double* u, double* u_next, int npts) {
    const int p = threadIdx.x + blockIdx.x * blockDim.x;
    if (p < npts) {
        const bool edge = p == 0 || p == npts - 1;
        u_next[p] = edge ? u[p] : 0.33333 * (u[p - 1] + u[p] + u[p + 1]);
    }
}

void launch_jacobi1d_f64(const double* u, double* u_next, int npts) {
    jacobi1d_f64<<<(npts + 127) / 128, 128>>>(u, u_next, npts);
}
