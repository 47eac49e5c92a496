// 1-D weighted stencil of radius 3 with the block's window and halo staged in shared memory;
// values outside [0, n) count as zero.
#include <cuda_runtime.h>

#define RADIUS 3
#define BLOCK_SIZE 128

__global__ void stencil_1d(const float* in, const float* w, float* out, int n) {
    __shared__ float temp[BLOCK_SIZE + 2 * RADIUS];
    int gindex = threadIdx.x + blockIdx.x * blockDim.x;
    int lindex = threadIdx.x + RADIUS;

    temp[lindex] = (gindex < n) ? in[gindex] : 0.0f;
    if (threadIdx.x < RADIUS) {
        int left = gindex - RADIUS;
        int right = gindex + BLOCK_SIZE;
        temp[lindex - RADIUS] = (left >= 0 && left < n) ? in[left] : 0.0f;
        temp[lindex + BLOCK_SIZE] = (right < n) ? in[right] : 0.0f;
    }
    __syncthreads();

    if (gindex < n) {
        float result = 0.0f;
        for (int offset = -RADIUS; offset <= RADIUS; offset++) {
            result += w[offset + RADIUS] * temp[lindex + offset];
        }
        out[gindex] = result;
    }
}

void launch_stencil_1d(const float* in, const float* w, float* out, int n) {
    stencil_1d<<<(n + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(in, w, out, n);
}
