// Dot product of two fp16 vectors with fp32 accumulation: grid-stride products, shared-memory
// tree per block, atomicAdd of the block sum into a float result.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void dot_fp16(const __half* a, const __half* b, float* result, int n) {
    __shared__ float partial[256];
    int t = threadIdx.x;
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x) {
        acc += __half2float(a[i]) * __half2float(b[i]);
    }
    partial[t] = acc;
    __syncthreads();
    for (int s = 128; s > 0; s >>= 1) {
        if (t < s) {
            partial[t] += partial[t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        atomicAdd(result, partial[0]);
    }
}

void launch_dot_fp16(const __half* a, const __half* b, float* result, int n) {
    dot_fp16<<<16, 256>>>(a, b, result, n);
}
