// The unbiased binary exponent and the sign of each float, read from its bits through an
// unsigned int view of the input buffer; grid-stride loop over a fixed 10 x 96 grid.
#include <cuda_runtime.h>

__global__ void exponent_of(const float* x, int* expo, int* negative, int count) {
    const unsigned int* bits = (const unsigned int*)x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        unsigned int w = bits[i];
        expo[i] = (int)((w >> 23) & 0xFFu) - 127;
        negative[i] = (int)(w >> 31);
    }
}

void launch_exponent_of(const float* x, int* expo, int* negative, int count) {
    exponent_of<<<10, 96>>>(x, expo, negative, count);
}
