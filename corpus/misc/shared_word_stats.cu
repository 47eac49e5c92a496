// Per-row count and mean of the positive entries: one warp per row; the per-lane counts live
// in an int shared buffer whose upper part, read through a float pointer, holds the sums.
#include <cuda_runtime.h>

__global__ void positive_stats(const float* m, int* counts, float* means, int rows, int cols) {
    __shared__ int words[64];
    float* partial = (float*)&words[32];
    int lane = threadIdx.x;
    int row = blockIdx.x;
    if (row >= rows) return;
    int c = 0;
    float s = 0.0f;
    for (int j = lane; j < cols; j += 32) {
        float v = m[row * cols + j];
        if (v > 0.0f) {
            c += 1;
            s += v;
        }
    }
    words[lane] = c;
    partial[lane] = s;
    __syncthreads();
    if (lane == 0) {
        int total = 0;
        float sum = 0.0f;
        for (int k = 0; k < 32; ++k) {
            total += words[k];
            sum += partial[k];
        }
        counts[row] = total;
        means[row] = total > 0 ? sum / total : 0.0f;
    }
}

void launch_positive_stats(const float* m, int* counts, float* means, int rows, int cols) {
    positive_stats<<<rows, 32>>>(m, counts, means, rows, cols);
}
