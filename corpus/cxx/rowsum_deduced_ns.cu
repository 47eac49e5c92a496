// A block-size template parameter written at the launch and an element type deduced from
// the arguments (`row_total<128><<<...>>>(out, x, C)` with `template <int BS, typename T>`);
// two namespaces define functions of the same name and the kernel calls both by their
// qualified names.
#include <cuda_runtime.h>

namespace fwd {
__device__ float weight(float v) { return 2.0f * v; }
}  // namespace fwd
namespace bwd {
__device__ float weight(float v) { return v - 1.0f; }
}  // namespace bwd

template <int BS, typename T>
__global__ void row_total(T* out, const T* x, int R, int C) {
    if (blockIdx.x >= R) return;
    __shared__ float buf[BS];
    const T* row = x + blockIdx.x * C;
    float s = 0.0f;
    for (int c = threadIdx.x; c < C; c += BS) {
        s += fwd::weight(row[c]) + bwd::weight(row[c]);
    }
    buf[threadIdx.x] = s;
    __syncthreads();
    for (int h = BS / 2; h > 0; h /= 2) {
        if (threadIdx.x < h) buf[threadIdx.x] += buf[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = buf[0];
}

void launch_row_total(float* out, const float* x, int R, int C) {
    row_total<128><<<R, 128>>>(out, x, R, C);
}
