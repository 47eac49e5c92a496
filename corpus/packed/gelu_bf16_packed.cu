// GELU (tanh form) over bf16 storage through a packed 16-byte struct of 8 lanes: a `using`
// alias, a differently named array member read directly, a static lane count used by name.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

template <typename Elem>
struct alignas(16) Vec16 {
    static constexpr int lanes = 16 / sizeof(Elem);
    Elem data[lanes];
    __device__ Elem& operator[](int j) { return data[j]; }
};

template <typename Elem>
__device__ Vec16<Elem> load16_cs(const Elem* src) {
    return *reinterpret_cast<const Vec16<Elem>*>(src);
}

template <typename Elem>
__device__ void store16_cs(Elem* dst, Vec16<Elem> v) {
    *reinterpret_cast<Vec16<Elem>*>(dst) = v;
}

using bf16 = __nv_bfloat16;
using v16 = Vec16<bf16>;

__global__ void gelu_bf16_packed(bf16* y, const bf16* x, int count) {
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * v16::lanes;
    if (base < count) {
        v16 in = load16_cs(x + base);
        v16 res;
        for (int j = 0; j < Vec16<bf16>::lanes; j++) {
            float xi = __bfloat162float(in.data[j]);
            float cube = 0.044715f * xi * xi * xi;
            res.data[j] = __float2bfloat16(0.5f * xi * (1.0f + tanhf(0.7978845608f * (xi + cube))));
        }
        store16_cs(y + base, res);
    }
}

void launch_gelu_bf16_packed(bf16* y, const bf16* x, int count) {
    int block = 64;
    int grid = (count / 8 + block - 1) / block;
    gelu_bf16_packed<<<grid, block>>>(y, x, count);
}
