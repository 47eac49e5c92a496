// Row maxima with the shared scratch taken from accessor structs: one specialised per element
// type with a getPointer() method, one built by a macro with operator[] and operator*.
#include <cuda_runtime.h>

template <typename T>
struct SharedScratch {
    __device__ T* getPointer() {
        extern __device__ void no_such_type(void);
        no_such_type();
        return 0;
    }
};
template <>
struct SharedScratch<float> {
    __device__ float* getPointer() {
        extern __shared__ float s_float[];
        return s_float;
    }
};
template <>
struct SharedScratch<int> {
    __device__ int* getPointer() {
        extern __shared__ int s_int[];
        return s_int;
    }
};

#define DEFINE_SCRATCH(t, n)                     \
    template <>                                  \
    struct Scratch<t> {                          \
        __device__ t& operator*() {              \
            extern __shared__ t n[];             \
            return *n;                           \
        }                                        \
        __device__ t& operator[](int i) {        \
            extern __shared__ t n[];             \
            return n[i];                         \
        }                                        \
    }

template <typename T>
struct Scratch {
    virtual __device__ T& operator*() = 0;
    virtual __device__ T& operator[](int i) = 0;
};
DEFINE_SCRATCH(float, scratch_f);

template <typename T>
__global__ void row_max_view(const T* in, T* out, int rows, int cols) {
    SharedScratch<T> smem;
    T* s = smem.getPointer();
    int row = blockIdx.x, t = threadIdx.x;
    if (row >= rows) return;  // uniform across the block
    T m = in[row * cols + (t < cols ? t : 0)];
    for (int c = t + blockDim.x; c < cols; c += blockDim.x) m = max(m, in[row * cols + c]);
    s[t] = m;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) s[t] = max(s[t], s[t + stride]);
        __syncthreads();
    }
    Scratch<T> first;
    if (t == 0) out[row] = *first;
}

void launch_row_max_view(const float* in, float* out, int rows, int cols) {
    row_max_view<float><<<rows, 64, 64 * sizeof(float)>>>(in, out, rows, cols);
}
