// Per-row product with a weight vector over fp32 rows: one block per row, threads stride over
// the row in 4-lane chunks of a packed struct (`using` alias, lane loop over `q`, streaming
// loader and storer names, a block-stride loop as the guard).
#include <cuda_runtime.h>

template <typename T>
struct alignas(16) Quad {
    static constexpr int n = 16 / sizeof(T);
    T v[n];
    __device__ T& operator[](int i) { return v[i]; }
};

template <typename T>
__device__ Quad<T> load128cs(const T* p) {
    return *reinterpret_cast<const Quad<T>*>(p);
}

template <typename T>
__device__ void store128cs(T* p, Quad<T> q) {
    *reinterpret_cast<Quad<T>*>(p) = q;
}

using f4 = Quad<float>;

__global__ void row_weight_packed(float* out, const float* inp, const float* w, int R, int C) {
    int row = blockIdx.x;
    if (row >= R) return;
    for (int c = threadIdx.x * f4::n; c < C; c += blockDim.x * f4::n) {
        f4 a = load128cs(inp + row * C + c);
        f4 g = load128cs(w + c);
        f4 r;
        for (int q = 0; q < f4::n; ++q) {
            r[q] = a[q] * g[q];
        }
        store128cs(out + row * C + c, r);
    }
}

void launch_row_weight_packed(float* out, const float* inp, const float* w, int R, int C) {
    row_weight_packed<<<R, 64>>>(out, inp, w, R, C);
}
