// Integer window sums of radius R through a shared tile with halos: the block stages its
// elements and R neighbours on each side (zeros past the ends), then each thread sums 2R+1
// staged values in an int.
#include <cuda_runtime.h>

#define R 2
#define TILE 128

__global__ void window_sum_int_smem(const int* src, int* dst, int count) {
    __shared__ int tile[TILE + 2 * R];
    int g = blockIdx.x * TILE + threadIdx.x;
    int l = threadIdx.x + R;
    tile[l] = g < count ? src[g] : 0;
    if (threadIdx.x < R) {
        int lo = g - R, hi = g + TILE;
        tile[l - R] = lo >= 0 ? src[lo] : 0;
        tile[l + TILE] = hi < count ? src[hi] : 0;
    }
    __syncthreads();
    if (g >= count) return;
    int total = 0;
    for (int d = -R; d <= R; ++d) total += tile[l + d];
    dst[g] = total;
}

void launch_window_sum_int_smem(const int* src, int* dst, int count) {
    window_sum_int_smem<<<(count + TILE - 1) / TILE, TILE>>>(src, dst, count);
}
