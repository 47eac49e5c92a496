// Logistic sigmoid written with preprocessor macros: block size, index helper, and a
// fast-math switch selecting __expf or expf.
#include <cuda_runtime.h>

#define SIG_BLOCK 128
#define GLOBAL_INDEX() (blockIdx.x * SIG_BLOCK + threadIdx.x)

#ifdef USE_FAST_EXP
#define EXP(v) __expf(v)
#else
#define EXP(v) expf(v)
#endif

__global__ void sigmoid_kernel(float* dst, const float* src, int len) {
    const int k = GLOBAL_INDEX();
    if (k < len) {
        dst[k] = 1.0f / (1.0f + EXP(-src[k]));
    }
}

void launch_sigmoid(float* dst, const float* src, int len) {
    sigmoid_kernel<<<(len + SIG_BLOCK - 1) / SIG_BLOCK, SIG_BLOCK>>>(dst, src, len);
}
