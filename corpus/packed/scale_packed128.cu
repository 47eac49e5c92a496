// Scale-and-shift over a packed 16-byte vector struct (llm.c style): a templated struct holding
// a T array, operator[], a static constexpr size, load128/store128 helpers and a typedef.
#include <cuda_runtime.h>

template <class T>
struct alignas(16) Packed128 {
    Packed128() = default;
    __device__ static Packed128 constant(T value) {
        Packed128 result;
        for (int k = 0; k < size; ++k) {
            result.payload[k] = value;
        }
        return result;
    }
    __device__ T& operator[](int index) { return payload[index]; }
    __device__ const T& operator[](int index) const { return payload[index]; }
    static constexpr const size_t size = 16 / sizeof(T);
    T payload[size];
};

template <class T>
__device__ Packed128<T> load128(const T* address) {
    return *reinterpret_cast<const Packed128<T>*>(address);
}

template <class T>
__device__ void store128(T* target, Packed128<T> value) {
    *reinterpret_cast<Packed128<T>*>(target) = value;
}

typedef Packed128<float> f128;

__global__ void scale_packed128(float* out, const float* inp, float scale, float shift, int n) {
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * f128::size;
    if (i >= n) {
        return;
    }
    f128 packed_out;
    f128 packed_inp = load128(inp + i);
    for (int k = 0; k < f128::size; ++k) {
        packed_out[k] = packed_inp[k] * scale + shift;
    }
    store128(out + i, packed_out);
}

void launch_scale_packed128(float* out, const float* inp, float scale, float shift, int n) {
    int threads = 128;
    int blocks = (n / 4 + threads - 1) / threads;
    scale_packed128<<<blocks, threads>>>(out, inp, scale, shift, n);
}
