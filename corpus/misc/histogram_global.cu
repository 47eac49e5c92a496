// Histogram with one global atomicAdd per input element (no privatisation); keys outside
// [0, nbins) are skipped.
#include <cuda_runtime.h>

__global__ void histogram_global(int* bins, const int* data, int count, int nbins) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < count) {
        int v = data[tid];
        if (v >= 0 && v < nbins) {
            atomicAdd(bins + v, 1);
        }
    }
}

void launch_histogram_global(int* bins, const int* data, int count, int nbins) {
    histogram_global<<<(count + 511) / 512, 512>>>(bins, data, count, nbins);
}
