// Row sums with a block reduction parameterised by the warp reduction it applies (llm.c
// style): a function-pointer typedef as the template parameter's type, the reducer passed as
// `blockReduce<warpReduceSum>`, and an anonymous enum giving the block size.
#include <cuda_runtime.h>

enum { BLOCK = 128, WARPS = BLOCK / 32 };

using reduction_func_t = float (*)(float);

__device__ float warpReduceSum(float v) {
    for (int off = 16; off > 0; off >>= 1) {
        v += __shfl_xor_sync(0xffffffff, v, off);
    }
    return v;
}

template <reduction_func_t warp_reduction>
__device__ float blockReduce(float val) {
    __shared__ float partial[WARPS];
    int lane = threadIdx.x % 32;
    int warp = threadIdx.x / 32;
    float w = warp_reduction(val);
    if (lane == 0) {
        partial[warp] = w;
    }
    __syncthreads();
    float v = lane < WARPS ? partial[lane] : 0.0f;
    return warp_reduction(v);
}

__global__ void block_sum_fnarg(float* out, const float* x, int R, int C) {
    if (blockIdx.x >= R) return;
    const float* row = x + blockIdx.x * C;
    float s = 0.0f;
    for (int c = threadIdx.x; c < C; c += BLOCK) {
        s += row[c];
    }
    float total = blockReduce<warpReduceSum>(s);
    if (threadIdx.x == 0) {
        out[blockIdx.x] = total;
    }
}

void launch_block_sum_fnarg(float* out, const float* x, int R, int C) {
    block_sum_fnarg<<<R, BLOCK>>>(out, x, R, C);
}
