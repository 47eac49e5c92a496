// Per-block partial sums of squares: a while-loop grid stride with the stride kept in a variable,
// an interleaved shared-memory tree (tid % (2 * s) == 0), and the partial stored by the block's
// first thread. Each block's partial is an output; the launch uses a grid of 6 blocks of 64.
#include <cuda_runtime.h>

#define THREADS 64

__global__ void block_sumsq_while(const float* v, int n, float* block_out) {
    __shared__ float sh[THREADS];
    int t = threadIdx.x;
    int k = blockIdx.x * THREADS + t;
    const int stride = THREADS * gridDim.x;
    float s2 = 0.0f;
    while (k < n) {
        float a = v[k];
        s2 += a * a;
        k += stride;
    }
    sh[t] = s2;
    __syncthreads();
    for (int s = 1; s < THREADS; s *= 2) {
        if (t % (2 * s) == 0) sh[t] += sh[t + s];
        __syncthreads();
    }
    if (t == 0) {
        block_out[blockIdx.x] = sh[0];
    }
}

void launch_block_sumsq_while(const float* v, int n, float* block_out) {
    block_sumsq_while<<<6, THREADS>>>(v, n, block_out);
}
