// Bilinear resampling of an image through a texture object: tex2D<float> with linear filtering
// and clamp addressing at unnormalised texel-centre coordinates (mode set by the host).
#include <cuda_runtime.h>

__global__ void texture_resample(float* resized, int out_w, int out_h, float step_x, float step_y,
                                 cudaTextureObject_t src) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col >= out_w || row >= out_h) return;
    float u = (col + 0.5f) * step_x;
    float v = (row + 0.5f) * step_y;
    resized[row * out_w + col] = tex2D<float>(src, u, v);
}

void resample(float* resized, cudaArray_t image, int in_w, int in_h, int out_w, int out_h) {
    cudaResourceDesc res;
    memset(&res, 0, sizeof(res));
    res.resType = cudaResourceTypeArray;
    res.res.array.array = image;
    cudaTextureDesc desc;
    memset(&desc, 0, sizeof(desc));
    desc.addressMode[0] = cudaAddressModeClamp;
    desc.addressMode[1] = cudaAddressModeClamp;
    desc.filterMode = cudaFilterModeLinear;
    desc.readMode = cudaReadModeElementType;
    desc.normalizedCoords = false;
    cudaTextureObject_t tex = 0;
    cudaCreateTextureObject(&tex, &res, &desc, NULL);
    dim3 block(32, 8);
    dim3 grid((out_w + block.x - 1) / block.x, (out_h + block.y - 1) / block.y);
    texture_resample<<<grid, block>>>(resized, out_w, out_h, (float)in_w / out_w,
                                      (float)in_h / out_h, tex);
    cudaDestroyTextureObject(tex);
}
