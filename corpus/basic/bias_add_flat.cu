// Bias added in place over a flattened (B, T, OC) activation (llm.c style): a grid-stride loop
// over every element, the bias column found with %.
#include <cuda_runtime.h>

__global__ void add_bias_flat(float* out, const float* bias, int B, int T, int OC) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int stride = blockDim.x * gridDim.x;
    for (int i = idx; i < B * T * OC; i += stride) {
        int col = i % OC;
        out[i] += bias[col];
    }
}

void launch_add_bias_flat(float* out, const float* bias, int B, int T, int OC) {
    int block_size = 256;
    int grid_size = (OC * B * T + block_size - 1) / block_size;
    add_bias_flat<<<grid_size, block_size>>>(out, bias, B, T, OC);
}
