// Row gather (index_select along dim 0): out[r, c] = src[index[r], c] on a 2-D grid, x along
// columns and y along the selected rows; negative indices count from the end (Python style).
#include <cuda_runtime.h>

__global__ void index_select_rows(float* out, const float* src, const int* index, int num_idx,
                                  int src_rows, int cols) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < num_idx && c < cols) {
        int s = index[r];
        if (s < 0) s += src_rows;
        out[r * cols + c] = src[s * cols + c];
    }
}

void launch_index_select_rows(float* out, const float* src, const int* index, int num_idx,
                              int src_rows, int cols) {
    dim3 block(64, 4);
    dim3 grid((cols + 63) / 64, (num_idx + 3) / 4);
    index_select_rows<<<grid, block>>>(out, src, index, num_idx, src_rows, cols);
}
