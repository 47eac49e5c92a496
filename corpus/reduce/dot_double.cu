// Dot product of fp32 vectors accumulated in double precision: per-thread double partials, a
// shared-memory double tree per block, one partial per block (out has ceil(n / 512) entries).
#include <cuda_runtime.h>

__global__ void dot_double(const float* u, const float* v, double* partial, int n) {
    __shared__ double sh[512];
    const int tid = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + tid;
    double prod = 0.0;
    if (i < n) {
        prod = (double)u[i] * (double)v[i];
    }
    sh[tid] = prod;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride >= 1; stride /= 2) {
        if (tid < stride) {
            sh[tid] += sh[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = sh[0];
    }
}

void launch_dot_double(const float* u, const float* v, double* partial, int n) {
    dot_double<<<(n + 511) / 512, 512>>>(u, v, partial, n);
}
