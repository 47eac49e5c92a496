// Bias gradient (llm.c matmul backward style): one block per output channel sums its column of
// dout through a dynamic shared-memory tree and adds the sum to the existing gradient. The
// column is reached through an alias moved to the channel.
#include <cuda_runtime.h>

__global__ void bias_grad_tree(float* dbias, const float* dout, int BT, int OC) {
    extern __shared__ float shared[];
    int o = blockIdx.x;
    int tid = threadIdx.x;
    int block_size = blockDim.x;
    const float* x = dout + o;
    float sum = 0.0f;
    for (int i = tid; i < BT; i += block_size) {
        sum += x[i * OC];
    }
    shared[tid] = sum;
    __syncthreads();
    for (int stride = block_size / 2; stride >= 1; stride /= 2) {
        __syncthreads();
        if (tid < stride) {
            shared[tid] += shared[tid + stride];
        }
    }
    if (tid == 0) {
        dbias[o] = dbias[o] + shared[0];
    }
}

void launch_bias_grad_tree(float* dbias, const float* dout, int BT, int OC) {
    const int block_size = 128;
    bias_grad_tree<<<OC, block_size, block_size * sizeof(float)>>>(dbias, dout, BT, OC);
}
