// Row softmax: one 128-thread block per row, shared-memory trees for the max and the sum.
#include <cuda_runtime.h>

#define THREADS 128

__global__ void softmax_block_tree(const float* x, float* y, int N, int C) {
    __shared__ float red[THREADS];
    int row = blockIdx.x;
    int t = threadIdx.x;
    const float* xr = x + row * C;
    float m = -INFINITY;
    for (int j = t; j < C; j += THREADS) m = fmaxf(m, xr[j]);
    red[t] = m;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (t < s) red[t] = fmaxf(red[t], red[t + s]);
        __syncthreads();
    }
    float rmax = red[0];
    __syncthreads();
    float acc = 0.0f;
    for (int j = t; j < C; j += THREADS) acc += expf(xr[j] - rmax);
    red[t] = acc;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        __syncthreads();
    }
    float total = red[0];
    for (int j = t; j < C; j += THREADS) y[row * C + j] = expf(xr[j] - rmax) / total;
}

void launch_softmax_block_tree(const float* x, float* y, int N, int C) {
    softmax_block_tree<<<N, THREADS>>>(x, y, N, C);
}
