// Each thread stages its element into shared memory with cuda::memcpy_async through a
// thread-scope pipeline, waits for it, and scales its staged value.
#include <cuda/pipeline>

#define STAGE 128

__global__ void staged_scale_pipeline(float *out, const float *in, float alpha, int n) {
    __shared__ float stage[STAGE];
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    const int i = blockIdx.x * STAGE + threadIdx.x;
    pipe.producer_acquire();
    if (i < n) {
        cuda::memcpy_async(&stage[threadIdx.x], &in[i], sizeof(float), pipe);
    }
    pipe.producer_commit();
    pipe.consumer_wait();
    __syncthreads();
    if (i < n) {
        out[i] = alpha * stage[threadIdx.x];
    }
    pipe.consumer_release();
}

void staged_scale(float *d_out, const float *d_in, float alpha, int n) {
    staged_scale_pipeline<<<(n + STAGE - 1) / STAGE, STAGE>>>(d_out, d_in, alpha, n);
}
