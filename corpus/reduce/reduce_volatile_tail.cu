// Per-block sums, classic unrolled-tail form: two loads per thread, a shared-memory tree while
// more than a warp remains, then the last warp finishes through a volatile pointer with
// __syncwarp() between steps (the warp-synchronous tail made safe for independent thread
// scheduling).
#include <cuda_runtime.h>

__device__ void warp_tail(volatile float* sdata, unsigned int tid) {
    float v = sdata[tid];
    v += sdata[tid + 32]; __syncwarp(); sdata[tid] = v; __syncwarp();
    v += sdata[tid + 16]; __syncwarp(); sdata[tid] = v; __syncwarp();
    v += sdata[tid + 8];  __syncwarp(); sdata[tid] = v; __syncwarp();
    v += sdata[tid + 4];  __syncwarp(); sdata[tid] = v; __syncwarp();
    v += sdata[tid + 2];  __syncwarp(); sdata[tid] = v; __syncwarp();
    v += sdata[tid + 1];  __syncwarp(); sdata[tid] = v;
}

__global__ void reduce_unrolled(const float* g_idata, float* g_odata, unsigned int n) {
    __shared__ float sdata[128];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    float s = (i < n) ? g_idata[i] : 0.0f;
    if (i + blockDim.x < n) s += g_idata[i + blockDim.x];
    sdata[tid] = s;
    __syncthreads();
    for (unsigned int st = blockDim.x / 2; st > 32; st >>= 1) {
        if (tid < st) sdata[tid] += sdata[tid + st];
        __syncthreads();
    }
    if (tid < 32) warp_tail(sdata, tid);
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

void launch_reduce_unrolled(const float* in, float* out, unsigned int n) {
    reduce_unrolled<<<(n + 255) / 256, 128>>>(in, out, n);
}
