// 9-tap FIR filter (valid part only) with the taps in __constant__ memory, initialised
// statically; out has n - 8 elements.
#include <cuda_runtime.h>

#define TAPS 9

__constant__ float c_taps[TAPS] = {0.02f, 0.05f, 0.1f, 0.15f, 0.36f, 0.15f, 0.1f, 0.05f, 0.02f};

__global__ void fir_constant(const float* __restrict__ signal, float* __restrict__ filtered,
                             int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n - (TAPS - 1)) return;
    float acc = 0.0f;
#pragma unroll
    for (int t = 0; t < TAPS; ++t) {
        acc += c_taps[t] * signal[i + t];
    }
    filtered[i] = acc;
}

void launch_fir_constant(const float* signal, float* filtered, int n) {
    int outputs = n - (TAPS - 1);
    fir_constant<<<(outputs + 127) / 128, 128>>>(signal, filtered, n);
}
