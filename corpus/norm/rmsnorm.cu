// RMSNorm forward: one 256-thread block per row, sum of squares reduced in static shared
// memory, y = x * rsqrt(mean(x^2) + eps) * w.
#include <cuda_runtime.h>

__global__ void rmsnorm_forward(float* y, const float* x, const float* w, float eps, int rows,
                                int C) {
    __shared__ float red[256];
    const int row = blockIdx.x;
    if (row >= rows) return;
    const float* xr = x + row * C;
    float* yr = y + row * C;

    float ss = 0.0f;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        float v = xr[c];
        ss += v * v;
    }
    red[threadIdx.x] = ss;
    __syncthreads();
    for (int s = blockDim.x >> 1; s > 0; s >>= 1) {
        if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
        __syncthreads();
    }
    const float scale = rsqrtf(red[0] / C + eps);
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        yr[c] = xr[c] * scale * w[c];
    }
}

void launch_rmsnorm_forward(float* y, const float* x, const float* w, float eps, int rows,
                            int C) {
    rmsnorm_forward<<<rows, 256>>>(y, x, w, eps, rows, C);
}
