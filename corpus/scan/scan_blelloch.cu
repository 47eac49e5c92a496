// Exclusive prefix sum of each 2*blockDim-element chunk (Blelloch up-sweep / down-sweep in
// dynamic shared memory, two elements per thread); the chunk totals go to block_totals so a
// later pass could add them back.
#include <cuda_runtime.h>

__global__ void scan_blelloch(const float* g_idata, float* g_odata, float* block_totals, int n) {
    extern __shared__ float temp[];
    int thid = threadIdx.x;
    int m = 2 * blockDim.x;
    int base = blockIdx.x * m;
    int ai = base + 2 * thid;
    int bi = ai + 1;
    temp[2 * thid] = ai < n ? g_idata[ai] : 0.0f;
    temp[2 * thid + 1] = bi < n ? g_idata[bi] : 0.0f;

    int offset = 1;
    for (int d = m >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (thid < d) {
            int a = offset * (2 * thid + 1) - 1;
            int b = offset * (2 * thid + 2) - 1;
            temp[b] += temp[a];
        }
        offset *= 2;
    }
    if (thid == 0) {
        block_totals[blockIdx.x] = temp[m - 1];
        temp[m - 1] = 0.0f;
    }
    for (int d = 1; d < m; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (thid < d) {
            int a = offset * (2 * thid + 1) - 1;
            int b = offset * (2 * thid + 2) - 1;
            float t = temp[a];
            temp[a] = temp[b];
            temp[b] += t;
        }
    }
    __syncthreads();
    if (ai < n) g_odata[ai] = temp[2 * thid];
    if (bi < n) g_odata[bi] = temp[2 * thid + 1];
}

void launch_scan_blelloch(const float* in, float* out, float* totals, int n) {
    const int threads = 128;
    const int blocks = (n + 2 * threads - 1) / (2 * threads);
    scan_blelloch<<<blocks, threads, 2 * threads * sizeof(float)>>>(in, out, totals, n);
}
