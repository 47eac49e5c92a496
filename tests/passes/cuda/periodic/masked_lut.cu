// A bias from a 40-entry table at (position & 31) + 4, one thread per element with a guard.
#include <cuda_runtime.h>

#define LANES 32

__global__ void masked_lut(float* v, const float* lut, int len) {
    int e = threadIdx.x + blockIdx.x * blockDim.x;
    if (e < len) {
        v[e] = v[e] + lut[(e & (LANES - 1)) + 4];
    }
}
