// Per-block partial sums with an unrolled grid-stride loop: each thread keeps UNROLL running sums
// in a local array (trip t adds the elements t, t + S, t + 2S, t + 3S with S the grid's thread
// count), folds them, and the block combines its threads with warp shuffles and a shared array
// of per-warp sums. Lane 0 of warp 0 writes the block's partial.
#include <cuda_runtime.h>

#define UNROLL 4
#define WARP 32

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int delta = WARP / 2; delta >= 1; delta /= 2) v += __shfl_down_sync(0xffffffffu, v, delta);
    return v;
}

__global__ void block_partials_unrolled(float* sums, const float* data, unsigned int len) {
    __shared__ float per_warp[WARP];
    unsigned int gid = threadIdx.x + blockIdx.x * blockDim.x;
    unsigned int span = blockDim.x * gridDim.x;
    float acc[UNROLL] = {0.0f};
    for (unsigned int pos = gid; pos < len; pos += span * UNROLL) {
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            acc[u] += (pos + u * span < len) ? data[pos + u * span] : 0.0f;
        }
    }
    for (int u = 1; u < UNROLL; ++u) acc[0] += acc[u];
    float v = warp_sum(acc[0]);
    int lane = threadIdx.x % WARP, warp = threadIdx.x / WARP;
    if (lane == 0) per_warp[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = (lane < blockDim.x / WARP) ? per_warp[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) sums[blockIdx.x] = v;
    }
}

void launch_block_partials_unrolled(float* sums, const float* data, unsigned int len) {
    unsigned int blocks = (len + 255) / 256;
    if (blocks > 16) blocks = 16;
    block_partials_unrolled<<<blocks, 256>>>(sums, data, len);
}
