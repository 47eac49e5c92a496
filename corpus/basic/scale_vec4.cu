// out = in * s, four elements per thread through float4 loads and stores; the first n % 4
// threads of the grid also handle the scalar tail.
#include <cuda_runtime.h>

__global__ void scale_vec4(float* __restrict__ out, const float* __restrict__ in, float s, int n) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int n4 = n / 4;
    if (tid < n4) {
        float4 v = reinterpret_cast<const float4*>(in)[tid];
        float4 r;
        r.x = v.x * s;
        r.y = v.y * s;
        r.z = v.z * s;
        r.w = v.w * s;
        reinterpret_cast<float4*>(out)[tid] = r;
    }
    if (tid < n % 4) {
        int t = n4 * 4 + tid;
        out[t] = in[t] * s;
    }
}

void launch_scale_vec4(float* out, const float* in, float s, int n) {
    int threads = 256;
    int blocks = (n + 4 * threads - 1) / (4 * threads);
    scale_vec4<<<blocks, threads>>>(out, in, s, n);
}
