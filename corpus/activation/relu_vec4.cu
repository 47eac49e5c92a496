// ReLU over float4 vectors; the buffer holds n4 float4 values (4 * n4 floats).
#include <cuda_runtime.h>

__global__ void relu_vec4(const float4* __restrict__ src, float4* __restrict__ dst, int n4) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n4) {
        float4 v = src[t];
        dst[t] = make_float4(fmaxf(v.x, 0.0f), fmaxf(v.y, 0.0f), fmaxf(v.z, 0.0f),
                             fmaxf(v.w, 0.0f));
    }
}

void launch_relu_vec4(const float* src, float* dst, int n) {
    int n4 = n / 4;
    relu_vec4<<<(n4 + 127) / 128, 128>>>(reinterpret_cast<const float4*>(src),
                                         reinterpret_cast<float4*>(dst), n4);
}
