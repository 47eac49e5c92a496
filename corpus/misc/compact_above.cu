// Stream compaction: the elements above a floor, packed to the front of `kept`.  Each pass of
// a block counts its survivors in a shared counter (each survivor takes the next local slot),
// one thread reserves the block's run of global slots, then the survivors write there.  The
// packed order is the order in which blocks reserve their runs.
#include <cuda_runtime.h>

__global__ void compact_above(const float* in, float* kept, int* kept_count, int len,
                              float floor_value) {
    __shared__ int s_n;
    __shared__ int s_start;
    for (int base = blockIdx.x * blockDim.x; base < len; base += gridDim.x * blockDim.x) {
        if (threadIdx.x == 0) s_n = 0;
        __syncthreads();
        int idx = base + threadIdx.x;
        float v = idx < len ? in[idx] : floor_value;
        int mine = -1;
        if (v > floor_value) mine = atomicAdd(&s_n, 1);
        __syncthreads();
        if (threadIdx.x == 0) s_start = atomicAdd(kept_count, s_n);
        __syncthreads();
        if (mine >= 0) kept[s_start + mine] = v;
        __syncthreads();
    }
}

void launch_compact_above(const float* in, float* kept, int* kept_count, int len,
                          float floor_value) {
    cudaMemset(kept_count, 0, sizeof(int));
    compact_above<<<6, 128>>>(in, kept, kept_count, len, floor_value);
}
