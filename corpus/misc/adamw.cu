// AdamW optimiser step, elementwise over all parameters: updates the first and second moments
// in place and applies decoupled weight decay. Bias corrections (1 - beta^t) are passed in.
#include <cuda_runtime.h>

__global__ void adamw_update(float* params, const float* grads, float* m, float* v, int n,
                             float lr, float beta1, float beta2, float beta1_corr,
                             float beta2_corr, float eps, float weight_decay) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float g = grads[i];
    float mi = beta1 * m[i] + (1.0f - beta1) * g;
    float vi = beta2 * v[i] + (1.0f - beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    float m_hat = mi / beta1_corr;
    float v_hat = vi / beta2_corr;
    float p = params[i];
    params[i] = p - lr * (m_hat / (sqrtf(v_hat) + eps) + weight_decay * p);
}

void launch_adamw_update(float* params, const float* grads, float* m, float* v, int n, float lr,
                         float beta1, float beta2, int t, float eps, float weight_decay) {
    float beta1_corr = 1.0f - powf(beta1, (float)t);
    float beta2_corr = 1.0f - powf(beta2, (float)t);
    adamw_update<<<(n + 511) / 512, 512>>>(params, grads, m, v, n, lr, beta1, beta2, beta1_corr,
                                           beta2_corr, eps, weight_decay);
}
