// Histogram of integer keys in [0, nbins): each block builds a private histogram in dynamic
// shared memory with shared atomics (grid-stride over the input), then merges it into the global
// histogram with global atomics.
#include <cuda_runtime.h>

__global__ void histogram_shared(const int* __restrict__ keys, int* __restrict__ hist, int n,
                                 int nbins) {
    extern __shared__ int local_hist[];
    for (int b = threadIdx.x; b < nbins; b += blockDim.x) {
        local_hist[b] = 0;
    }
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        atomicAdd(&local_hist[keys[i]], 1);
    }
    __syncthreads();
    for (int b = threadIdx.x; b < nbins; b += blockDim.x) {
        int c = local_hist[b];
        if (c != 0) {
            atomicAdd(&hist[b], c);
        }
    }
}

void launch_histogram_shared(const int* keys, int* hist, int n, int nbins) {
    histogram_shared<<<8, 256, nbins * sizeof(int)>>>(keys, hist, n, nbins);
}
