// Per-block sums with a shared-memory tree (dynamic shared memory, sequential addressing).
// partial[b] = sum of in[b*256 .. b*256+255] (out-of-range elements count as 0).
#include <cuda_runtime.h>

__global__ void reduce_shared_tree(const float* in, float* partial, int n) {
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = sdata[0];
    }
}

void launch_reduce_shared_tree(const float* in, float* partial, int n) {
    int threads = 256;
    int blocks = (n + threads - 1) / threads;
    reduce_shared_tree<<<blocks, threads, threads * sizeof(float)>>>(in, partial, n);
}
