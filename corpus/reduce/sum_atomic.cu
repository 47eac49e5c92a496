// Full sum by one global atomicAdd per element into a scalar accumulator.
#include <cuda_runtime.h>

__global__ void sum_atomic(const float* values, float* acc, int count) {
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid < count) atomicAdd(acc, values[gid]);
}

void launch_sum_atomic(const float* values, float* acc, int count) {
    sum_atomic<<<(count + 63) / 64, 64>>>(values, acc, count);
}
