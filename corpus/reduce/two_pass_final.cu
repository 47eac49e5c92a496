// Two-pass sum, second pass: a single block of 1024 threads folds num_partials partial sums
// (strided loop) and reduces them in shared memory; result in out[0].
#include <cuda_runtime.h>

__global__ void reduce_partials_final(const float* partials, float* out, int num_partials) {
    __shared__ float cache[1024];
    int t = threadIdx.x;
    float v = 0.0f;
    int j = t;
    while (j < num_partials) {
        v += partials[j];
        j += blockDim.x;
    }
    cache[t] = v;
    __syncthreads();
    int s = blockDim.x / 2;
    while (s != 0) {
        if (t < s) {
            cache[t] = cache[t] + cache[t + s];
        }
        __syncthreads();
        s /= 2;
    }
    if (t == 0) {
        out[0] = cache[0];
    }
}

void launch_reduce_partials_final(const float* partials, float* out, int num_partials) {
    reduce_partials_final<<<1, 1024>>>(partials, out, num_partials);
}
