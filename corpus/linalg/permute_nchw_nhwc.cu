// Layout change NCHW -> NHWC: a 3-D grid (w tiles, h tiles, n * c) reads coalesced along W and
// writes strided by C.
#include <cuda_runtime.h>

__global__ void nchw_to_nhwc(const float* src, float* dst, int N, int C, int H, int W) {
    int w = blockIdx.x * blockDim.x + threadIdx.x;
    int h = blockIdx.y * blockDim.y + threadIdx.y;
    int nc = blockIdx.z;
    int n = nc / C;
    int c = nc % C;
    if (w < W && h < H && n < N) {
        dst[((n * H + h) * W + w) * C + c] = src[((n * C + c) * H + h) * W + w];
    }
}

void launch_nchw_to_nhwc(const float* src, float* dst, int N, int C, int H, int W) {
    dim3 block(32, 2);
    dim3 grid((W + 31) / 32, (H + 1) / 2, N * C);
    nchw_to_nhwc<<<grid, block>>>(src, dst, N, C, H, W);
}
