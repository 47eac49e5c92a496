// Must be refused: reads one layer of a layered texture object (tex2DLayered<float>).
#include <cuda_runtime.h>

__global__ void gather_texture(float* out, cudaTextureObject_t tex, const int* idx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = tex2DLayered<float>(tex, idx[i] + 0.5f, 0.5f, 1);
        out[i] = v * 2.0f;
    }
}

void launch_gather_texture(float* out, cudaTextureObject_t tex, const int* idx, int n) {
    gather_texture<<<(n + 127) / 128, 128>>>(out, tex, idx, n);
}
