// Must be refused: a recursive __device__ function (unbounded call depth cannot be inlined or
// mapped to NKI).
#include <cuda_runtime.h>

__device__ int factorial(int k) {
    if (k <= 1) return 1;
    return k * factorial(k - 1);
}

__global__ void factorial_kernel(int* out, const int* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = factorial(in[i]);
    }
}

void launch_factorial(int* out, const int* in, int n) {
    factorial_kernel<<<(n + 127) / 128, 128>>>(out, in, n);
}
