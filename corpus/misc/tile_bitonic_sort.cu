// Sorts each tile of 2 * TILE_THREADS keys ascending in shared memory with a bitonic network:
// every thread compare-exchanges one pair per step through a reference-taking helper, at
// positions computed in unsigned arithmetic; the tile offset uses the 24-bit multiply.
#include <cuda_runtime.h>

#define TILE_THREADS 64

__device__ inline void compare_exchange(unsigned int &first, unsigned int &second, unsigned int ascending) {
    if ((first > second) == ascending) {
        unsigned int held = first;
        first = second;
        second = held;
    }
}

__global__ void tile_bitonic_sort(const unsigned int *keys, unsigned int *sorted, unsigned int tiles) {
    if (blockIdx.x >= tiles) return;
    __shared__ unsigned int tile[2 * TILE_THREADS];
    unsigned int t = threadIdx.x;
    unsigned int origin = __umul24(blockIdx.x, 2 * TILE_THREADS);
    tile[t] = keys[origin + t];
    tile[t + TILE_THREADS] = keys[origin + t + TILE_THREADS];
    for (unsigned int width = 2; width <= 2 * TILE_THREADS; width <<= 1) {
        unsigned int ascending = (t & (width / 2)) == 0;
        for (unsigned int gap = width / 2; gap > 0; gap >>= 1) {
            __syncthreads();
            unsigned int left = 2 * t - (t & (gap - 1));
            compare_exchange(tile[left], tile[left + gap], ascending);
        }
    }
    __syncthreads();
    sorted[origin + t] = tile[t];
    sorted[origin + t + TILE_THREADS] = tile[t + TILE_THREADS];
}

void launch_tile_bitonic_sort(const unsigned int *keys, unsigned int *sorted, unsigned int tiles) {
    tile_bitonic_sort<<<tiles, TILE_THREADS>>>(keys, sorted, tiles);
}
