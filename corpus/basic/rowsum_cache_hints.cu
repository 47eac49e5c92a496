// Per-row sums of squares with cache-hinted loads: a block per row, a strided loop over the
// row read through an alias with __ldca (L1) and __ldlu (last use), a shared-memory tree, and
// the total written by thread 0 with __stcs (streaming store) after a scale read by __ldg.
#include <cuda_runtime.h>

#define THREADS 128

__global__ void rowsum_cache_hints(float* norms, const float* __restrict__ a,
                                   const float* __restrict__ b, const float* rowscale, int rows,
                                   int cols) {
    __shared__ float part[THREADS];
    int r = blockIdx.x;
    const float* ar = a + (size_t)r * cols;
    float acc = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float u = __ldca(ar + c);
        float v = __ldlu(&b[(size_t)r * cols + c]);
        acc += u * v;
    }
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        __stcs(&norms[r], part[0] * __ldg(&rowscale[r]));
    }
}

void launch_rowsum_cache_hints(float* norms, const float* a, const float* b,
                               const float* rowscale, int rows, int cols) {
    rowsum_cache_hints<<<rows, THREADS>>>(norms, a, b, rowscale, rows, cols);
}
