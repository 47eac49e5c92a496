// A __device__ gain table read, and a __device__ hit counter per tap bumped, inside a device
// helper that the kernel calls from a grid-stride loop over a fixed 12 x 128 grid.
#include <cuda_runtime.h>

#define GAIN_TAPS 16

__device__ float gain_table[GAIN_TAPS];
__device__ unsigned int tap_hits[GAIN_TAPS];

__device__ float apply_gain(float x, int k) {
    int tap = k & (GAIN_TAPS - 1);
    atomicAdd(&tap_hits[tap], 1u);
    return x * gain_table[tap];
}

__global__ void gain_stream(float* out, const float* in, int count) {
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < count; k += blockDim.x * gridDim.x) {
        out[k] = apply_gain(in[k], k);
    }
}

void launch_gain_stream(float* out, const float* in, int count) {
    gain_stream<<<12, 128>>>(out, in, count);
}
