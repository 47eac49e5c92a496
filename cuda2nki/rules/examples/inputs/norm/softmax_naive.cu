// Row softmax, naive: one thread per row makes three passes (max, exp and sum, normalise).
#include <cuda_runtime.h>

__global__ void softmax_naive(const float* input, float* output, int N, int C) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < N) {
        const float* x = input + r * C;
        float* y = output + r * C;
        float maxval = x[0];
        for (int j = 1; j < C; j++) {
            if (x[j] > maxval) {
                maxval = x[j];
            }
        }
        float sum = 0.0f;
        for (int j = 0; j < C; j++) {
            float e = expf(x[j] - maxval);
            y[j] = e;
            sum += e;
        }
        for (int j = 0; j < C; j++) {
            y[j] /= sum;
        }
    }
}

void launch_softmax_naive(const float* input, float* output, int N, int C) {
    softmax_naive<<<(N + 63) / 64, 64>>>(input, output, N, C);
}
