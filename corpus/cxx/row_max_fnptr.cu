// Row maxima, one warp per row, through a warp reduction whose combining function is a
// template parameter declared as a function pointer (`template <float (*op)(float, float)>`),
// passed by address from a nested namespace (`&red::ops::max2`) and called by name.
#include <cuda_runtime.h>

namespace red {
namespace ops {
__device__ float max2(float a, float b) { return fmaxf(a, b); }
}  // namespace ops
}  // namespace red

template <float (*op)(float, float)>
__device__ float warp_all(float v) {
    for (int off = 16; off > 0; off /= 2) {
        v = op(v, __shfl_xor_sync(0xffffffff, v, off));
    }
    return v;
}

__global__ void row_max_fnptr(float* out, const float* x, int N, int C) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (warp >= N) return;
    float m = -INFINITY;
    for (int c = lane; c < C; c += 32) {
        m = red::ops::max2(m, x[warp * C + c]);
    }
    m = warp_all<&red::ops::max2>(m);
    if (lane == 0) out[warp] = m;
}

void launch_row_max_fnptr(float* out, const float* x, int N, int C) {
    row_max_fnptr<<<(N * 32 + 255) / 256, 256>>>(out, x, N, C);
}
