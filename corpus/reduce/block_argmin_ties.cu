// Per-block minimum and where it is: each step of the shared tree moves the upper half's pair
// down where its value is smaller, or equal with a smaller position, so the first position of
// the minimum wins whatever the tree's shape.
#include <cuda_runtime.h>
#include <math.h>

#define LOW_THREADS 256

__global__ void block_low(const float* score, float* low, int* low_at, int count) {
    __shared__ float key[LOW_THREADS];
    __shared__ int pos[LOW_THREADS];
    unsigned int tid = threadIdx.x;
    unsigned int idx = blockIdx.x * LOW_THREADS + tid;
    key[tid] = idx < count ? score[idx] : INFINITY;
    pos[tid] = idx < count ? (int)idx : count;
    __syncthreads();
    for (unsigned int span = LOW_THREADS / 2; span > 0; span /= 2) {
        if (tid < span) {
            float k2 = key[tid + span];
            int p2 = pos[tid + span];
            if (k2 < key[tid] || (k2 == key[tid] && p2 < pos[tid])) {
                key[tid] = k2;
                pos[tid] = p2;
            }
        }
        __syncthreads();
    }
    if (tid == 0) {
        low[blockIdx.x] = key[0];
        low_at[blockIdx.x] = pos[0];
    }
}

void launch_block_low(const float* score, float* low, int* low_at, int count) {
    block_low<<<(count + LOW_THREADS - 1) / LOW_THREADS, LOW_THREADS>>>(score, low, low_at, count);
}
