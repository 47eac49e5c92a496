// Row sums with a 32 x 8 block: threadIdx.y picks one of 8 rows, the 32 threads along x stride
// over its columns, partials go to a padded 2-D shared array, and the x == 0 thread of each row
// adds them up sequentially.
#include <cuda_runtime.h>

__global__ void row_sum_tile(const float* in, float* out, int rows, int cols) {
    __shared__ float partial[8][33];
    int r = blockIdx.x * blockDim.y + threadIdx.y;
    float s = 0.0f;
    if (r < rows) {
        for (int c = threadIdx.x; c < cols; c += blockDim.x) {
            s += in[r * cols + c];
        }
    }
    partial[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.x == 0 && r < rows) {
        float total = 0.0f;
        for (int k = 0; k < 32; ++k) {
            total += partial[threadIdx.y][k];
        }
        out[r] = total;
    }
}

void launch_row_sum_tile(const float* in, float* out, int rows, int cols) {
    row_sum_tile<<<(rows + 7) / 8, dim3(32, 8)>>>(in, out, rows, cols);
}
