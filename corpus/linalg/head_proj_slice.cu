// Per-head projection, one head per launch: y[h][i][j] = sum_k x[h][i][k] * w[k][j] with the
// head h an argument; a flat thread index split by / and %, early return, register accumulator.
#include <cuda_runtime.h>

__global__ void head_proj(const float* __restrict__ x, const float* __restrict__ w,
                          float* __restrict__ y, int heads, int head, int rows, int dk,
                          int dv) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= rows * dv) return;
    int i = idx / dv;
    int j = idx % dv;
    const int xoff = head * rows * dk;
    float acc = 0.0f;
    for (int k = 0; k < dk; ++k) {
        acc += x[xoff + i * dk + k] * w[k * dv + j];
    }
    y[head * rows * dv + i * dv + j] = acc;
}

void launch_head_proj(const float* x, const float* w, float* y, int heads, int rows, int dk,
                      int dv) {
    for (int h = 0; h < heads; ++h) {
        head_proj<<<(rows * dv + 255) / 256, 256>>>(x, w, y, heads, h, rows, dk, dv);
    }
}
