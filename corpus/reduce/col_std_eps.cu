// Column standard deviation (PolyBench correlation style): one thread per column sums the
// squared deviations from the column's mean in global memory, divides, takes the root and
// replaces a near-zero deviation by 1.  #define sizes, 1-D grid.
#include <cuda_runtime.h>
#include <math.h>

#define M m
#define N n
#define FLOAT_N 3214212.01f
#define EPS 0.005f

__global__ void std_kernel(int m, int n, const float* mean, float* std, const float* data) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < M) {
        std[j] = 0.0f;
        for (int i = 0; i < N; i++) {
            std[j] += (data[i * M + j] - mean[j]) * (data[i * M + j] - mean[j]);
        }
        std[j] /= (FLOAT_N);
        std[j] = sqrtf(std[j]);
        if (std[j] <= EPS) {
            std[j] = 1.0f;
        }
    }
}

void launch_std(int m, int n, const float* mean, float* std, const float* data) {
    std_kernel<<<(m + 255) / 256, 256>>>(m, n, mean, std, data);
}
