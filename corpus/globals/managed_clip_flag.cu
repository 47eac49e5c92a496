// Clipping a two-dimensional __device__ field in place; a __managed__ flag records that some
// value was clipped (a plain store, any writer wins).  2-D grid of 32 x 4 blocks.
#include <cuda_runtime.h>

#define MAX_ROWS 256
#define FIELD_COLS 96

__device__ float field[MAX_ROWS][FIELD_COLS];
__managed__ int clipped;

__global__ void clip_field(float lo, float hi, int rows) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < FIELD_COLS) {
        float v = field[r][c];
        float w = fminf(fmaxf(v, lo), hi);
        if (w != v) {
            field[r][c] = w;
            clipped = 1;
        }
    }
}

void launch_clip_field(float lo, float hi, int rows) {
    dim3 block(32, 4);
    dim3 grid((FIELD_COLS + 31) / 32, (rows + 3) / 4);
    clip_field<<<grid, block>>>(lo, hi, rows);
}
