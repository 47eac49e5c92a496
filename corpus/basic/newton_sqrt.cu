// Square roots by Newton iteration in a do-while loop; every thread runs until its own estimate
// converges (per-thread trip counts), capped at 60 iterations.
#include <cuda_runtime.h>

__global__ void newton_sqrt(float* roots, int* iters, const float* x, int n) {
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid >= n) return;
    float a = x[gid];
    float r = a > 1.0f ? a : 1.0f;
    float prev;
    int it = 0;
    do {
        prev = r;
        r = 0.5f * (r + a / r);
        ++it;
    } while (fabsf(r - prev) > 1e-6f * r && it < 60);
    roots[gid] = r;
    iters[gid] = it;
}

void launch_newton_sqrt(float* roots, int* iters, const float* x, int n) {
    newton_sqrt<<<(n + 127) / 128, 128>>>(roots, iters, x, n);
}
