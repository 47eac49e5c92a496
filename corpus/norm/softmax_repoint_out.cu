// Row softmax with one 32-thread block per row (llm.c softmax kernel 3 style): the exponentials
// are written to the output, then the row alias is re-pointed from the input to the output to
// sum and normalise them; warp reductions are __device__ helpers, the maximum is broadcast from
// lane 0 with __shfl_sync.
#include <cuda_runtime.h>
#include <math.h>

__device__ float warp_max(float v) {
    for (int off = 16; off > 0; off /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, off));
    return v;
}

__device__ float warp_sum(float v) {
    for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffff, v, off);
    return v;
}

__global__ void softmax_repoint(float* out, const float* inp, int N, int C) {
    int idx = blockIdx.x;
    int tid = threadIdx.x;
    const float* x = inp + idx * C;
    float maxval = -INFINITY;
    for (int i = tid; i < C; i += blockDim.x) maxval = fmaxf(maxval, x[i]);
    maxval = warp_max(maxval);
    float offset = __shfl_sync(0xffffffff, maxval, 0);
    for (int i = tid; i < C; i += blockDim.x) out[idx * C + i] = expf(x[i] - offset);
    x = out + idx * C;
    float sumval = 0.0f;
    for (int i = tid; i < C; i += blockDim.x) sumval += x[i];
    sumval = warp_sum(sumval);
    for (int i = tid; i < C; i += blockDim.x) out[idx * C + i] = x[i] / sumval;
}

void launch_softmax_repoint(float* out, const float* inp, int N, int C) {
    softmax_repoint<<<N, 32>>>(out, inp, N, C);
}
