// GELU backward (tanh approximation): the derivative needs sech^2 = 1 / cosh^2 of the tanh
// argument, spelled with coshf as training code often does.
#include <cuda_runtime.h>

#define GELU_K 0.7978845608028654f

__global__ void gelu_backward_sech(float* dinp, const float* inp, const float* dout, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= n) return;
    float x = inp[idx];
    float u = GELU_K * (x + 0.044715f * x * x * x);
    float ch = coshf(u);
    float sech2 = 1.0f / (ch * ch);
    float grad = 0.5f * (1.0f + tanhf(u)) + 0.5f * x * sech2 * GELU_K * (1.0f + 0.134145f * x * x);
    dinp[idx] = grad * dout[idx];
}

void launch_gelu_backward_sech(float* dinp, const float* inp, const float* dout, int n) {
    const int threads = 256;
    gelu_backward_sech<<<(n + threads - 1) / threads, threads>>>(dinp, inp, dout, n);
}
