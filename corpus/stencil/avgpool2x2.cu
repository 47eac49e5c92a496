// 2x2 average pooling with stride 2 over [C, H, W] feature maps: output sizes H / 2 and W / 2
// truncate (a trailing odd row or column is dropped). 3-D grid: (ow tiles, oh tiles, channels).
#include <cuda_runtime.h>

__global__ void avgpool2x2(const float* in, float* out, int C, int H, int W) {
    int OH = H / 2;
    int OW = W / 2;
    int ox = blockIdx.x * blockDim.x + threadIdx.x;
    int oy = blockIdx.y * blockDim.y + threadIdx.y;
    int ch = blockIdx.z;
    if (ch < C && oy < OH && ox < OW) {
        const float* plane = in + ch * H * W;
        int y = 2 * oy;
        int x = 2 * ox;
        float s = plane[y * W + x] + plane[y * W + x + 1] + plane[(y + 1) * W + x] +
                  plane[(y + 1) * W + x + 1];
        out[(ch * OH + oy) * OW + ox] = 0.25f * s;
    }
}

void launch_avgpool2x2(const float* in, float* out, int C, int H, int W) {
    dim3 block(16, 16);
    dim3 grid((W / 2 + 15) / 16, (H / 2 + 15) / 16, C);
    avgpool2x2<<<grid, block>>>(in, out, C, H, W);
}
