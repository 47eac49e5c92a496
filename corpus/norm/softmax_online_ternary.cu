// Online softmax with the update written as ternaries on one comparison, __expf, and the
// maximum assigned after the sum; a block of 128 threads, one row each.
#include <cuda_runtime.h>
#include <math.h>

#define ROWS_PER_BLOCK 128

__global__ void softmax_online_ternary(float* out, const float* in, int N, int C) {
    int idx = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x;
    if (idx < N) {
        const float* p = in + (size_t)idx * C;
        float m = -INFINITY, d = 0.0f;
        for (int j = 0; j < C; ++j) {
            const float v = p[j];
            const bool bigger = m < v;
            d = bigger ? d * __expf(m - v) + 1.0f : d + __expf(v - m);
            m = bigger ? v : m;
        }
        float inv = 1.0f / d;
        for (int j = 0; j < C; ++j) out[(size_t)idx * C + j] = __expf(p[j] - m) * inv;
    }
}

void launch_softmax_online_ternary(float* out, const float* in, int N, int C) {
    softmax_online_ternary<<<(N + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK, ROWS_PER_BLOCK>>>(out, in,
                                                                                           N, C);
}
