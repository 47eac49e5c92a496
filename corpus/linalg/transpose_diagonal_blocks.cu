// Tiled transpose whose blocks take their tiles in diagonal order (spreading the blocks that run
// together over memory partitions): square matrices rotate the column of tiles by the row,
// other shapes linearise the block number and re-split it, rotated the same way.  Every tile is
// still transposed once; only which block does it changes.  Ragged edge tiles are guarded.
#include <cuda_runtime.h>

#define TILE_SIDE 32
#define SWEEP 8

__global__ void transpose_diagonal_blocks(float* dst, const float* src, int cols, int rows) {
    __shared__ float stage[TILE_SIDE][TILE_SIDE + 1];
    int tile_c, tile_r;
    if (cols == rows) {
        tile_r = blockIdx.x;
        tile_c = (blockIdx.x + blockIdx.y) % gridDim.x;
    } else {
        int linear = blockIdx.x + gridDim.x * blockIdx.y;
        tile_r = linear % gridDim.y;
        tile_c = ((linear / gridDim.y) + tile_r) % gridDim.x;
    }
    int c = tile_c * TILE_SIDE + threadIdx.x;
    int r = tile_r * TILE_SIDE + threadIdx.y;
    for (int k = 0; k < TILE_SIDE; k += SWEEP) {
        if (c < cols && r + k < rows) {
            stage[threadIdx.y + k][threadIdx.x] = src[c + (r + k) * cols];
        }
    }
    __syncthreads();
    c = tile_r * TILE_SIDE + threadIdx.x;
    r = tile_c * TILE_SIDE + threadIdx.y;
    for (int k = 0; k < TILE_SIDE; k += SWEEP) {
        if (c < rows && r + k < cols) {
            dst[c + (r + k) * rows] = stage[threadIdx.x][threadIdx.y + k];
        }
    }
}

void launch_transpose_diagonal_blocks(float* dst, const float* src, int cols, int rows) {
    dim3 grid((cols + TILE_SIDE - 1) / TILE_SIDE, (rows + TILE_SIDE - 1) / TILE_SIDE);
    dim3 block(TILE_SIDE, SWEEP);
    transpose_diagonal_blocks<<<grid, block>>>(dst, src, cols, rows);
}
