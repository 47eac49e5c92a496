// 3x3 box average over a flat thread index split into row and column by / and % with a
// #define column count; the taps are spelled (i - 1) * NCOL + (j + 1) and so on, the guard is
// an early return.
#include <cuda_runtime.h>

#define NCOL 80

__global__ void box3x3_flat(const float* in, float* out, int n_rows) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int i = tid / NCOL;
    int j = tid % NCOL;
    if (i < 1 || i >= n_rows - 1 || j < 1 || j >= NCOL - 1) return;
    float s = 0.0f;
    s += in[(i - 1) * NCOL + (j - 1)] + in[(i - 1) * NCOL + j] + in[(i - 1) * NCOL + (j + 1)];
    s += in[i * NCOL + (j - 1)] + in[i * NCOL + j] + in[i * NCOL + (j + 1)];
    s += in[(i + 1) * NCOL + (j - 1)] + in[(i + 1) * NCOL + j] + in[(i + 1) * NCOL + (j + 1)];
    out[i * NCOL + j] = s / 9.0f;
}

void launch_box3x3_flat(const float* in, float* out, int n_rows) {
    box3x3_flat<<<(n_rows * NCOL + 127) / 128, 128>>>(in, out, n_rows);
}
