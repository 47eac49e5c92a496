// In-place activation chosen at run time by a switch over an integer mode (ReLU, leaky ReLU,
// tanh; other modes leave the data unchanged).
#include <cuda_runtime.h>

#define ACT_RELU 0
#define ACT_LEAKY_RELU 1
#define ACT_TANH 2

__global__ void __launch_bounds__(256) apply_activation(float* data, int n, int mode, float slope) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = data[i];
        switch (mode) {
            case ACT_RELU:
                v = v > 0.0f ? v : 0.0f;
                break;
            case ACT_LEAKY_RELU:
                v = v > 0.0f ? v : slope * v;
                break;
            case ACT_TANH:
                v = tanhf(v);
                break;
            default:
                break;
        }
        data[i] = v;
    }
}

void launch_apply_activation(float* data, int n, int mode, float slope) {
    apply_activation<<<(n + 255) / 256, 256>>>(data, n, mode, slope);
}
