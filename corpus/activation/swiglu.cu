// SwiGLU on a packed [rows, 2*H] input: out[r, c] = silu(inp[r, c]) * inp[r, H + c].
// Flat 1-D indexing with division and modulo.
#include <cuda_runtime.h>

__device__ float silu_f(float v) { return v / (1.0f + expf(-v)); }

__global__ void swiglu_forward(float* out, const float* inp, int rows, int H) {
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    int total = rows * H;
    if (gid >= total) {
        return;
    }
    int r = gid / H;
    int c = gid % H;
    const float* row = inp + r * 2 * H;
    out[gid] = silu_f(row[c]) * row[H + c];
}

void launch_swiglu(float* out, const float* inp, int rows, int H) {
    int total = rows * H;
    swiglu_forward<<<(total + 255) / 256, 256>>>(out, inp, rows, H);
}
