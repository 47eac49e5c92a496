// Residual add over bf16 through a packed struct that is built from and stored as 128-bit
// words (llm.c style): a word constructor copying an int4 into the array, a getter copying it
// back, streaming loads and stores (__ldcs / __stcs) of the words, a grid-stride loop.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <string.h>

template <class E>
struct alignas(16) Pack {
    Pack() = default;
    __device__ explicit Pack(int4 word) {
        static_assert(sizeof(word) == sizeof(vals), "a word per pack");
        memcpy(&vals, &word, sizeof(word));
    }
    __device__ E& operator[](int q) { return vals[q]; }
    __device__ const E& operator[](int q) const { return vals[q]; }
    __device__ int4 bits() const {
        int4 word;
        memcpy(&word, &vals, sizeof(word));
        return word;
    }
    static constexpr const size_t count = sizeof(int4) / sizeof(E);
    E vals[count];
};

template <class E>
__device__ Pack<E> load128cs(const E* p) {
    return Pack<E>{__ldcs(reinterpret_cast<const int4*>(p))};
}

template <class E>
__device__ void store128cs(E* p, Pack<E> v) {
    __stcs(reinterpret_cast<int4*>(p), v.bits());
}

typedef __nv_bfloat16 floatX;
using xpack = Pack<floatX>;

__global__ void residual_bits(floatX* out, const floatX* a, const floatX* b, int n) {
    int stride = gridDim.x * blockDim.x * xpack::count;
    for (int at = (blockIdx.x * blockDim.x + threadIdx.x) * xpack::count; at < n; at += stride) {
        xpack va = load128cs(a + at);
        xpack vb = load128cs(b + at);
        xpack vo;
        for (int lane = 0; lane < xpack::count; lane++) {
            vo[lane] = (floatX)((float)va[lane] + (float)vb[lane]);
        }
        store128cs(out + at, vo);
    }
}

void launch_residual_bits(floatX* out, const floatX* a, const floatX* b, int n) {
    const int block = 40;
    residual_bits<<<(n / 8 + block - 1) / block, block>>>(out, a, b, n);
}
