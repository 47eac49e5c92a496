// RMSNorm on a configurable storage type (llm.c-style floatX typedef chosen by the
// preprocessor; bf16 unless ENABLE_FP32 is defined). One warp per row: loads convert to fp32,
// the sum of squares is reduced with __shfl_xor_sync, results are rounded back to floatX.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#if defined(ENABLE_FP32)
typedef float floatX;
#else
typedef __nv_bfloat16 floatX;
#endif

__global__ void rmsnorm_floatx(floatX* __restrict__ out, const floatX* __restrict__ inp,
                               const floatX* __restrict__ weight, int N, int C) {
    const int lane = threadIdx.x % 32;
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (row >= N) return;
    const floatX* x = inp + row * C;
    float ss = 0.0f;
    for (int c = lane; c < C; c += 32) {
        float v = (float)x[c];
        ss += v * v;
    }
    for (int mask = 16; mask > 0; mask /= 2) {
        ss += __shfl_xor_sync(0xffffffff, ss, mask);
    }
    float r = rsqrtf(ss / (float)C + 1e-5f);
    floatX* o = out + row * C;
    for (int c = lane; c < C; c += 32) {
        o[c] = (floatX)((float)x[c] * r * (float)weight[c]);
    }
}

void launch_rmsnorm_floatx(floatX* out, const floatX* inp, const floatX* weight, int N, int C) {
    rmsnorm_floatx<<<(N + 3) / 4, 128>>>(out, inp, weight, N, C);
}
