// 1-D integer convolution with a runtime tap array: taps that hang off either end are skipped
// by a bounds test inside the tap loop (they contribute nothing), the sum is a plain int.
#include <cuda_runtime.h>

__global__ void conv1d_int_taps(const int* signal, const int* taps, int* out, int len, int ntaps) {
    int pos = blockIdx.x * blockDim.x + threadIdx.x;
    if (pos >= len) return;
    int first = pos - ntaps / 2;
    int acc = 0;
    for (int t = 0; t < ntaps; t++) {
        int at = first + t;
        if (at >= 0 && at < len) acc += signal[at] * taps[t];
    }
    out[pos] = acc;
}

void launch_conv1d_int_taps(const int* signal, const int* taps, int* out, int len, int ntaps) {
    conv1d_int_taps<<<(len + 255) / 256, 256>>>(signal, taps, out, len, ntaps);
}
