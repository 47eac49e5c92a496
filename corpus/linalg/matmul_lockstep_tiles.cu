// Tiled C = A * B with 16 x 16 shared tiles, walking A's row of tiles and B's column of tiles
// with two loop variables stepped together (the lead one tested against the last tile);
// loads and the store are guarded, so any sizes work.
#include <cuda_runtime.h>

#define TILE 16

__global__ void matmul_lockstep(float* C, const float* A, const float* B, int hA, int wA,
                                int wB) {
    int bx = blockIdx.x, by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;
    int aFirst = wA * TILE * by;
    int aLast = aFirst + wA - 1;
    int bFirst = TILE * bx;
    int row = by * TILE + ty, col = bx * TILE + tx;
    float sum = 0.0f;
    for (int a = aFirst, b = bFirst; a <= aLast; a += TILE, b += TILE * wB) {
        __shared__ float As[TILE][TILE];
        __shared__ float Bs[TILE][TILE];
        int k0 = a - aFirst;
        As[ty][tx] = (row < hA && k0 + tx < wA) ? A[a + wA * ty + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < wA && col < wB) ? B[b + wB * ty + tx] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) sum += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < hA && col < wB) C[wB * TILE * by + TILE * bx + wB * ty + tx] = sum;
}

void launch_matmul_lockstep(float* C, const float* A, const float* B, int hA, int wA, int wB) {
    dim3 threads(TILE, TILE);
    dim3 grid((wB + TILE - 1) / TILE, (hA + TILE - 1) / TILE);
    matmul_lockstep<<<grid, threads>>>(C, A, B, hA, wA, wB);
}
