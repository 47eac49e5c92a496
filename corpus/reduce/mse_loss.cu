// Mean squared error: per-block shared-memory sums of squared differences, each block adding its
// share (block sum / n) into the scalar loss with atomicAdd.
#include <cuda_runtime.h>

#define MSE_THREADS 256

__global__ void mse_loss(const float* pred, const float* target, float* loss, int n) {
    __shared__ float buf[MSE_THREADS];
    int i = blockIdx.x * MSE_THREADS + threadIdx.x;
    float d = 0.0f;
    if (i < n) {
        d = pred[i] - target[i];
    }
    buf[threadIdx.x] = d * d;
    __syncthreads();
    for (int s = MSE_THREADS / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(loss, buf[0] / (float)n);
}

void launch_mse_loss(const float* pred, const float* target, float* loss, int n) {
    mse_loss<<<(n + MSE_THREADS - 1) / MSE_THREADS, MSE_THREADS>>>(pred, target, loss, n);
}
