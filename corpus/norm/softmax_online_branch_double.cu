// Online softmax with a double normaliser; the branch tests for an old maximum first
// (v <= m: add), the rescaling branch second.  A 2-D launch of one row of blocks.
#include <cuda_runtime.h>
#include <math.h>

__global__ void softmax_online_double(float* probs, const float* logits, int n, int width) {
    int row = threadIdx.x + blockDim.x * blockIdx.x;
    if (row < n) {
        float run_max = -INFINITY;
        double acc = 0.0;
        for (int k = 0; k < width; k++) {
            float v = logits[row * width + k];
            if (v <= run_max) {
                acc += exp(v - run_max);
            } else {
                float old = run_max;
                run_max = v;
                acc = acc * exp(old - run_max) + exp(v - run_max);
            }
        }
        for (int k = 0; k < width; k++) {
            probs[row * width + k] = (float)(exp(logits[row * width + k] - run_max) / acc);
        }
    }
}

void launch_softmax_online_double(float* probs, const float* logits, int n, int width) {
    dim3 block(32, 1);
    dim3 grid((n + 31) / 32, 1);
    softmax_online_double<<<grid, block>>>(probs, logits, n, width);
}
