// Row softmax, one warp per row: the row and the lane come from one flat thread index, the row
// is reached through const and non-const aliases (x = inp + row * C, y = out + row * C), and
// both reductions are __shfl_xor_sync butterflies written inline.
#include <cuda_runtime.h>
#include <math.h>

__global__ void softmax_warp_alias(float* out, const float* inp, int N, int C) {
    int lane = threadIdx.x % 32;
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (row >= N) return;
    const float* x = inp + row * C;
    float* y = out + row * C;
    float mx = -INFINITY;
    for (int c = lane; c < C; c += 32) mx = fmaxf(mx, x[c]);
    for (int off = 16; off > 0; off /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffff, mx, off));
    float sum = 0.0f;
    for (int c = lane; c < C; c += 32) sum += expf(x[c] - mx);
    for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffff, sum, off);
    for (int c = lane; c < C; c += 32) y[c] = expf(x[c] - mx) / sum;
}

void launch_softmax_warp_alias(float* out, const float* inp, int N, int C) {
    softmax_warp_alias<<<(N * 32 + 127) / 128, 128>>>(out, inp, N, C);
}
