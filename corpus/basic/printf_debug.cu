// Elementwise absolute difference with a debug printf for the first thread (printf is accepted
// and ignored by the tool, with a note).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void abs_diff_debug(float* out, const float* a, const float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) {
        printf("abs_diff_debug: n=%d grid=%d block=%d\n", n, gridDim.x, blockDim.x);
    }
    if (i < n) {
        out[i] = fabsf(a[i] - b[i]);
    }
}

void launch_abs_diff_debug(float* out, const float* a, const float* b, int n) {
    abs_diff_debug<<<(n + 255) / 256, 256>>>(out, a, b, n);
}
