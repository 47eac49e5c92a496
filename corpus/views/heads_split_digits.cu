// Attention head split: a (B, T, H, D) activation walked flat by the thread index, whose digits
// (taken apart by a chain of % and / over products of the sizes) address the (B, H, T, D) copy.
#include <cuda_runtime.h>

__global__ void heads_split_digits(const float* act, float* heads, int B, int T, int H, int D) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < B * T * H * D) {
        int d = i % D;
        int h = (i / D) % H;
        int t = (i / (D * H)) % T;
        int b = i / (D * H * T);
        heads[((b * H + h) * T + t) * D + d] = act[i];
    }
}

static int ceil_div(int a, int b) { return (a + b - 1) / b; }

void launch_heads_split_digits(const float* act, float* heads, int B, int T, int H, int D) {
    const int block = 256;
    heads_split_digits<<<ceil_div(B * T * H * D, block), block>>>(act, heads, B, T, H, D);
}
