// Weighted row sums spread over several blocks per row: row on blockIdx.y, columns across the
// x blocks, every thread adds its element into the row's output with a global atomicAdd.
#include <cuda_runtime.h>

__global__ void row_sum_atomic(const float* x, const float* w, float* out, int R, int C) {
    int r = blockIdx.y;
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < C) atomicAdd(&out[r], x[r * C + j] * w[r]);
}

void launch_row_sum_atomic(const float* x, const float* w, float* out, int R, int C) {
    dim3 grid((C + 127) / 128, R);
    row_sum_atomic<<<grid, 128>>>(x, w, out, R, C);
}
