// float4 axpy with streaming cache hints on every access, grid-stride over the float4 words:
// __ldcs and __ldlu of float4 values through pointer arithmetic, __stcs of the result, and a
// scalar read by __ldca.
#include <cuda_runtime.h>

__global__ void axpy_vec4_hints(float4* z, const float4* x, const float4* y, const float* alpha,
                                int n4) {
    float a = __ldca(alpha);
    for (int w = blockIdx.x * blockDim.x + threadIdx.x; w < n4; w += gridDim.x * blockDim.x) {
        float4 xv = __ldcs(x + w);
        float4 yv = __ldlu(&y[w]);
        float4 r = make_float4(a * xv.x + yv.x, a * xv.y + yv.y, a * xv.z + yv.z,
                               a * xv.w + yv.w);
        __stcs(z + w, r);
    }
}

void launch_axpy_vec4_hints(float4* z, const float4* x, const float4* y, const float* alpha,
                            int n4) {
    axpy_vec4_hints<<<16, 256>>>(z, x, y, alpha, n4);
}
