// 7-tap FIR filter with the taps in a __constant__ variable template (one table per element
// type), the window clipped at the end of the signal by a once-evaluating min macro written as
// a GNU statement expression, and const pointers marked with the GNU __restrict.
#include <cuda_runtime.h>

#define NTAPS 7
#define clip_min(a, b) ({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); _a < _b ? _a : _b; })

template <typename T>
__constant__ T taps[NTAPS] = {T(0.05), T(0.1), T(0.2), T(0.3), T(0.2), T(0.1), T(0.05)};

template <typename T>
__global__ void fir_taps_template(const T* const __restrict x, T* const __restrict y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    T acc = 0;
    for (int t = 0; t < clip_min(NTAPS, n - i); ++t) acc += taps<T>[t] * x[i + t];
    y[i] = acc;
}

void launch_fir_taps_template(const float* x, float* y, int n) {
    fir_taps_template<float><<<(n + 255) / 256, 256>>>(x, y, n);
}
