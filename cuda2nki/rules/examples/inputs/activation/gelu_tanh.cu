// GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
#include <cuda_runtime.h>

#define GELU_SCALING_FACTOR 0.7978845608028654f

__global__ void gelu_forward(float* out, const float* inp, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        float xi = inp[i];
        float cube = 0.044715f * xi * xi * xi;
        out[i] = 0.5f * xi * (1.0f + tanhf(GELU_SCALING_FACTOR * (xi + cube)));
    }
}

void launch_gelu_forward(float* out, const float* inp, int N) {
    const int block_size = 512;
    const int grid_size = (N + block_size - 1) / block_size;
    gelu_forward<<<grid_size, block_size>>>(out, inp, N);
}
