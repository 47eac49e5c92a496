// Row sums of bf16 rows through 8-lane packed loads: one warp per row, lanes stride over the
// row in packed chunks, accumulate the lanes in fp32, then reduce with warp shuffles (typedef
// alias, lane loop over `e`, an early-return row guard, a row alias pointer).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

template <class E>
struct alignas(16) Packed128 {
    static constexpr const size_t size = 16 / sizeof(E);
    E payload[size];
    __device__ E& operator[](int i) { return payload[i]; }
    __device__ const E& operator[](int i) const { return payload[i]; }
};

template <class E>
__device__ Packed128<E> load128(const E* p) {
    return *reinterpret_cast<const Packed128<E>*>(p);
}

typedef Packed128<__nv_bfloat16> x128;

__global__ void row_sum_packed(float* out, const __nv_bfloat16* x, int N, int C) {
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= N) return;
    const __nv_bfloat16* xr = x + row * C;
    float acc = 0.0f;
    for (int c = lane * x128::size; c < C; c += 32 * x128::size) {
        x128 v = load128(xr + c);
        for (int e = 0; e < x128::size; e++) {
            acc += (float)v[e];
        }
    }
    for (int off = 16; off > 0; off /= 2) {
        acc += __shfl_xor_sync(0xffffffff, acc, off);
    }
    if (lane == 0) out[row] = acc;
}

void launch_row_sum_packed(float* out, const __nv_bfloat16* x, int N, int C) {
    row_sum_packed<<<(N + 3) / 4, 128>>>(out, x, N, C);
}
