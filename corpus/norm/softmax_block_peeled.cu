// Row softmax, one block of 256 threads per row: per-warp shuffle reductions, the warps'
// results in shared memory, and thread 0 combining them starting from warp 0's value.
#include <cuda_runtime.h>
#include <math.h>

__device__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, o));
    return v;
}

__device__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

__global__ void softmax_block_peeled(float* dst, const float* src, int rows, int cols) {
    __shared__ float part[8];
    if (blockIdx.x >= rows) return;
    const float* row = src + blockIdx.x * cols;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nwarps = blockDim.x / 32;

    float m = -INFINITY;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
    m = warp_max(m);
    if (lane == 0) part[warp] = m;
    __syncthreads();
    if (threadIdx.x == 0) {
        float best = part[0];
        for (int w = 1; w < nwarps; w++) best = fmaxf(best, part[w]);
        part[0] = best;
    }
    __syncthreads();
    float rowmax = part[0];
    __syncthreads();

    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(row[c] - rowmax);
    s = warp_sum(s);
    if (lane == 0) part[warp] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float total = part[0];
        for (int w = 1; w < nwarps; ++w) total += part[w];
        part[0] = total;
    }
    __syncthreads();
    float total = part[0];
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        dst[blockIdx.x * cols + c] = expf(row[c] - rowmax) / total;
    }
}

void launch_softmax_block_peeled(float* dst, const float* src, int rows, int cols) {
    softmax_block_peeled<<<rows, 256>>>(dst, src, rows, cols);
}
