// Inclusive prefix sum within each 256-element block (Hillis-Steele, double-buffered shared
// memory). Each block scans its own chunk independently.
#include <cuda_runtime.h>

#define SCAN_BLOCK 256

__global__ void scan_hillis_steele(const float* in, float* out, int n) {
    __shared__ float buf[2][SCAN_BLOCK];
    int tid = threadIdx.x;
    int gid = blockIdx.x * SCAN_BLOCK + tid;
    int pout = 0;
    int pin = 1;
    buf[pout][tid] = (gid < n) ? in[gid] : 0.0f;
    __syncthreads();
    for (int offset = 1; offset < SCAN_BLOCK; offset <<= 1) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (tid >= offset) {
            buf[pout][tid] = buf[pin][tid] + buf[pin][tid - offset];
        } else {
            buf[pout][tid] = buf[pin][tid];
        }
        __syncthreads();
    }
    if (gid < n) {
        out[gid] = buf[pout][tid];
    }
}

void launch_scan_hillis_steele(const float* in, float* out, int n) {
    scan_hillis_steele<<<(n + SCAN_BLOCK - 1) / SCAN_BLOCK, SCAN_BLOCK>>>(in, out, n);
}
