// 3x3 2-D convolution (cross-correlation) with zero padding, straight from global memory,
// 8x8 blocks on a 2-D grid.
#include <cuda_runtime.h>

__global__ void conv2d_3x3(const float* __restrict__ img, const float* __restrict__ filt,
                           float* __restrict__ res, int H, int W) {
    int ix = blockIdx.x * blockDim.x + threadIdx.x;
    int iy = blockIdx.y * blockDim.y + threadIdx.y;
    if (ix >= W || iy >= H) {
        return;
    }
    float acc = 0.0f;
    for (int dy = -1; dy <= 1; ++dy) {
        for (int dx = -1; dx <= 1; ++dx) {
            int yy = iy + dy;
            int xx = ix + dx;
            if (yy >= 0 && yy < H && xx >= 0 && xx < W) {
                acc += filt[(dy + 1) * 3 + (dx + 1)] * img[yy * W + xx];
            }
        }
    }
    res[iy * W + ix] = acc;
}

void launch_conv2d_3x3(const float* img, const float* filt, float* res, int H, int W) {
    dim3 threads(8, 8);
    dim3 blocks((W + 7) / 8, (H + 7) / 8);
    conv2d_3x3<<<blocks, threads>>>(img, filt, res, H, W);
}
