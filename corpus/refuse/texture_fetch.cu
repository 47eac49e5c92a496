// Must be refused: reads through a texture object (tex1Dfetch).
#include <cuda_runtime.h>

__global__ void gather_texture(float* out, cudaTextureObject_t tex, const int* idx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = tex1Dfetch<float>(tex, idx[i]);
    }
}

void launch_gather_texture(float* out, cudaTextureObject_t tex, const int* idx, int n) {
    gather_texture<<<(n + 127) / 128, 128>>>(out, tex, idx, n);
}
