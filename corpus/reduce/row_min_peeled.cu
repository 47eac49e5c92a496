// Row minima, a block of 64 threads (two warps) per row: shfl_down warp minima in a static
// shared array, then warp 0's lane 0 starts from the first warp's value.
#include <cuda_runtime.h>
#include <float.h>

__global__ void row_min_peeled(float* out, const float* in, int rows, int n) {
    __shared__ float sm[32];
    if (blockIdx.x >= rows) return;
    const float* x = in + (size_t)blockIdx.x * n;
    float v = FLT_MAX;
    for (int i = threadIdx.x; i < n; i += blockDim.x) v = fminf(v, x[i]);
    for (int o = 16; o > 0; o /= 2) v = fminf(v, __shfl_down_sync(0xffffffff, v, o));
    if (threadIdx.x % 32 == 0) sm[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        float lo = sm[0];
        for (int w = 1; w < blockDim.x / 32; w++) lo = fminf(sm[w], lo);
        out[blockIdx.x] = lo;
    }
}

void launch_row_min_peeled(float* out, const float* in, int rows, int n) {
    row_min_peeled<<<rows, 64>>>(out, in, rows, n);
}
