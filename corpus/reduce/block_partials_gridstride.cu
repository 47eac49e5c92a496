// Per-block partial sums over a grid-stride loop: a fixed grid of blocks walks the whole vector
// (each thread keeps its own running sum), a shared-memory tree combines the block's threads and
// thread 0 writes the block's partial. The partials are the kernel's result (a second launch,
// not bound here, would add them up).
#include <cuda_runtime.h>

#define NBLOCKS 12

__global__ void block_partials_gridstride(const float* __restrict__ in, float* __restrict__ partial,
                                          int count) {
    extern __shared__ float cache[];
    const int tid = threadIdx.x;
    float running = 0.0f;
    for (int e = blockIdx.x * blockDim.x + tid; e < count; e += gridDim.x * blockDim.x) {
        running += in[e];
    }
    cache[tid] = running;
    __syncthreads();
    for (int half = blockDim.x >> 1; half > 0; half >>= 1) {
        if (tid < half) {
            cache[tid] += cache[tid + half];
        }
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = cache[0];
}

void launch_block_partials_gridstride(const float* in, float* partial, int count) {
    block_partials_gridstride<<<NBLOCKS, 128, 128 * sizeof(float)>>>(in, partial, count);
}
