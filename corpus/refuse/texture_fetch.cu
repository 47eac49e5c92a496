// Must be refused: reads four-channel texels through a texture object (tex1Dfetch<float4>).
#include <cuda_runtime.h>

__global__ void gather_texture(float* out, cudaTextureObject_t tex, const int* idx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 v = tex1Dfetch<float4>(tex, idx[i]);
        out[i] = v.x + v.w;
    }
}

void launch_gather_texture(float* out, cudaTextureObject_t tex, const int* idx, int n) {
    gather_texture<<<(n + 127) / 128, 128>>>(out, tex, idx, n);
}
