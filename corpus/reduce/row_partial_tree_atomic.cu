// Row sums of squares in chunks: each block reduces a 256-wide chunk of one row through a
// shared-memory tree, and thread 0 adds the chunk's sum into the row's output with atomicAdd.
#include <cuda_runtime.h>

#define CHUNK 256

__global__ void row_sumsq_chunks(const float* __restrict__ in, float* __restrict__ sumsq, int rows,
                                 int cols) {
    __shared__ float buf[CHUNK];
    const int row = blockIdx.y;
    const int col = blockIdx.x * CHUNK + threadIdx.x;
    float v = 0.0f;
    if (col < cols) {
        float e = in[(size_t)row * cols + col];
        v = e * e;
    }
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int s = CHUNK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(&sumsq[row], buf[0]);
}

void launch_row_sumsq_chunks(const float* in, float* sumsq, int rows, int cols) {
    dim3 grid((cols + CHUNK - 1) / CHUNK, rows);
    row_sumsq_chunks<<<grid, CHUNK>>>(in, sumsq, rows, cols);
}
