// Must be refused: inline PTX through asm volatile (reads the %laneid special register).
#include <cuda_runtime.h>

__device__ __forceinline__ unsigned int lane_id() {
    unsigned int ret;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(ret));
    return ret;
}

__global__ void lane_ids(unsigned int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = lane_id();
    }
}

void launch_lane_ids(unsigned int* out, int n) {
    lane_ids<<<(n + 255) / 256, 256>>>(out, n);
}
