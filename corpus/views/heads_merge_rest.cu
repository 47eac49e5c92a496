// Attention head merge written from the output's side: each thread owns one element of the flat
// (nb, nt, nh, hd) output and takes its index apart with a remainder split again and again,
// reading the (nb, nh, nt, hd) heads there; an early return guards the tail.
#include <cuda_runtime.h>

__global__ void heads_merge_rest(const float* heads, float* merged, int nb, int nt, int nh, int hd) {
    int g = threadIdx.x + blockDim.x * blockIdx.x;
    if (g >= nb * nt * nh * hd) return;
    int b = g / (nt * nh * hd);
    int rest = g % (nt * nh * hd);
    int t = rest / (nh * hd);
    rest = rest % (nh * hd);
    int h = rest / hd;
    int e = rest % hd;
    merged[g] = heads[((b * nh + h) * nt + t) * hd + e];
}

void launch_heads_merge_rest(const float* heads, float* merged, int nb, int nt, int nh, int hd) {
    int total = nb * nt * nh * hd;
    heads_merge_rest<<<(total + 127) / 128, 128>>>(heads, merged, nb, nt, nh, hd);
}
