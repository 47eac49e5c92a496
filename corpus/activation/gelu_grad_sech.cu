// GELU (tanh approximation) backward: d/dx [0.5 x (1 + tanh(u))], u = k (x + c x^3),
// with sech^2(u) written as 1 / cosh(u)^2.  The gradient accumulates into dinp.
#define GELU_K 0.7978845608f
#define GELU_C 0.044715f

__global__ void gelu_grad_sech(float* dinp, const float* inp, const float* dout, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float x = inp[i];
        float u = GELU_K * (x + GELU_C * x * x * x);
        float ch = coshf(u);
        float sech2 = 1.0f / (ch * ch);
        float local = 0.5f * (1.0f + tanhf(u)) + 0.5f * x * sech2 * GELU_K * (1.0f + 3.0f * GELU_C * x * x);
        dinp[i] += local * dout[i];
    }
}

void gelu_grad_sech_launch(float* dinp, const float* inp, const float* dout, int n) {
    const int threads = 256;
    gelu_grad_sech<<<(n + threads - 1) / threads, threads>>>(dinp, inp, dout, n);
}
