// Online softmax, one thread per row, the running maximum updated by a branch: a new maximum
// rescales the sum (and contributes exp(0) = 1), any other value adds its exponential.
#include <cuda_runtime.h>
#include <math.h>

__global__ void softmax_online_branch(float* y, const float* x, int rows, int cols) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* xr = x + r * cols;
    float mx = -INFINITY;
    float s = 0.0f;
    for (int c = 0; c < cols; ++c) {
        float v = xr[c];
        if (v > mx) {
            s = s * expf(mx - v) + 1.0f;
            mx = v;
        } else {
            s += expf(v - mx);
        }
    }
    for (int c = 0; c < cols; ++c) {
        y[r * cols + c] = expf(xr[c] - mx) / s;
    }
}

void launch_softmax_online_branch(float* y, const float* x, int rows, int cols) {
    softmax_online_branch<<<(rows + 63) / 64, 64>>>(y, x, rows, cols);
}
