// Scaled absolute column deviation: out[j] = scale[j] * sum_i |a[i][j] - center[j]|, one
// thread per column, early return, 64-thread blocks.
#include <cuda_runtime.h>
#include <math.h>

__global__ void col_abs_dev(int R, int C, const float* a, const float* center, const float* scale,
                            float* out) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= C) return;
    float s = 0.0f;
    for (int row = 0; row < R; row++) s += fabsf(a[row * C + col] - center[col]);
    out[col] = scale[col] * s;
}

void launch_col_abs_dev(int R, int C, const float* a, const float* center, const float* scale,
                        float* out) {
    col_abs_dev<<<(C + 63) / 64, 64>>>(R, C, a, center, scale, out);
}
