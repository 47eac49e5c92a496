// Scales an fp16 vector two elements at a time through __half2 (packed loads, __hmul2), with a
// scalar tail for an odd length.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void scale_half2(__half* data, float factor, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int pairs = n / 2;
    __half2 f2 = __float2half2_rn(factor);
    if (t < pairs) {
        __half2* d2 = reinterpret_cast<__half2*>(data);
        d2[t] = __hmul2(d2[t], f2);
    }
    if (t == 0 && (n & 1)) {
        data[n - 1] = __float2half(__half2float(data[n - 1]) * factor);
    }
}

void launch_scale_half2(__half* data, float factor, int n) {
    int pairs = n / 2;
    scale_half2<<<(pairs + 127) / 128 + 1, 128>>>(data, factor, n);
}
