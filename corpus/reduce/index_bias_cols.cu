// Each output adds the element and the tap number over a few taps: out = sum_t (a + t), the
// tap index used as a value with no cast, the bound a macro; 2-D grid, columns on x.
#include <cuda_runtime.h>

#define NTAP 4

__global__ void index_bias_cols(float* b, const float* a, int h, int w) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float total = 0.0f;
    for (int tap = 0; tap < NTAP; tap++) {
        total = total + (a[y * w + x] + tap);
    }
    b[y * w + x] = total;
}

void go(float* b, const float* a, int h, int w) {
    dim3 block(16, 16);
    dim3 grid((w + 15) / 16, (h + 15) / 16);
    index_bias_cols<<<grid, block>>>(b, a, h, w);
}
