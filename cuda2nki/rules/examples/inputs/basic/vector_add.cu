// Elementwise vector addition: out[i] = a[i] + b[i], one thread per element.
#include <cuda_runtime.h>

__global__ void vector_add(float* out, const float* a, const float* b, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        out[i] = a[i] + b[i];
    }
}

void launch_vector_add(float* out, const float* a, const float* b, int N) {
    const int block = 256;
    const int grid = (N + block - 1) / block;
    vector_add<<<grid, block>>>(out, a, b, N);
}
