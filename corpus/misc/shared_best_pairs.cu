// Per-block maximum and its position: one shared float buffer holds the values in its first
// half and, read through an int pointer, the positions in its second half.
#include <cuda_runtime.h>
#include <math.h>

#define PAIR_THREADS 128

__global__ void block_best(const float* vals, float* best, int* best_at, int n) {
    __shared__ float pool[2 * PAIR_THREADS];
    int* where = (int*)&pool[PAIR_THREADS];
    int t = threadIdx.x;
    int g = blockIdx.x * PAIR_THREADS + t;
    pool[t] = g < n ? vals[g] : -INFINITY;
    where[t] = g < n ? g : -1;
    __syncthreads();
    for (int s = PAIR_THREADS / 2; s > 0; s >>= 1) {
        if (t < s && pool[t + s] > pool[t]) {
            pool[t] = pool[t + s];
            where[t] = where[t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        best[blockIdx.x] = pool[0];
        best_at[blockIdx.x] = where[0];
    }
}

void launch_block_best(const float* vals, float* best, int* best_at, int n) {
    block_best<<<(n + PAIR_THREADS - 1) / PAIR_THREADS, PAIR_THREADS>>>(vals, best, best_at, n);
}
