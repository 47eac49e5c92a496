// z = alpha * x + beta * y over double vectors with double scalars, grid-stride loop.
#include <cuda_runtime.h>

__global__ void axpby_gridstride_f64(size_t len, double alpha, const double* __restrict__ x,
                                     double beta, const double* __restrict__ y,
                                     double* __restrict__ z) {
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < len;
         k += (size_t)gridDim.x * blockDim.x) {
        z[k] = alpha * x[k] + beta * y[k];
    }
}

void launch_axpby_gridstride_f64(size_t len, double alpha, const double* x, double beta,
                                 const double* y, double* z) {
    axpby_gridstride_f64<<<64, 256>>>(len, alpha, x, beta, y, z);
}
