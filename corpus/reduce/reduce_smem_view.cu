// Block sums through a shared-memory view struct (SDK style): the struct's conversion operator
// hands out the dynamic shared memory as a T array, with a specialisation for double.
#include <cuda_runtime.h>

template <class T>
struct SharedMemory {
    __device__ inline operator T*() {
        extern __shared__ int __smem[];
        return (T*)__smem;
    }
    __device__ inline operator const T*() const {
        extern __shared__ int __smem[];
        return (T*)__smem;
    }
};

template <>
struct SharedMemory<double> {
    __device__ inline operator double*() {
        extern __shared__ double __smem_d[];
        return (double*)__smem_d;
    }
};

template <class T>
__global__ void reduce_view(const T* __restrict__ g_idata, T* __restrict__ g_odata, unsigned int n) {
    T* sdata = SharedMemory<T>();
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
    T mySum = (i < n) ? g_idata[i] : 0;
    if (i + blockDim.x < n) mySum += g_idata[i + blockDim.x];
    sdata[tid] = mySum;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] = mySum = mySum + sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = mySum;
}

void launch_reduce_view(const float* in, float* out, unsigned int n) {
    int threads = 128;
    int blocks = (n + threads * 2 - 1) / (threads * 2);
    reduce_view<float><<<blocks, threads, threads * sizeof(float)>>>(in, out, n);
}
