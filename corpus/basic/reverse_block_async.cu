// Asynchronous global->shared copies (cp.async through the pipeline primitives), then a
// block-local reversal out of shared memory.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

__global__ void reverse_block_async(const float* in, float* out, int n) {
    __shared__ float stage[256];
    int i = blockIdx.x * 256 + threadIdx.x;
    if (i < n) {
        __pipeline_memcpy_async(&stage[threadIdx.x], &in[i], sizeof(float));
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    int j = blockIdx.x * 256 + (255 - threadIdx.x);
    if (i < n && j < n) out[i] = stage[255 - threadIdx.x];
}

void launch_reverse_block_async(const float* in, float* out, int n) {
    reverse_block_async<<<(n + 255) / 256, 256>>>(in, out, n);
}
