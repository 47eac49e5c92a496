// Per-warp statistics: a warp sum through __shfl_down_sync over the active mask, a count of
// positive values through the pre-CUDA 9 __ballot and __popc, and flags from __any and
// __all_sync over the lanes still in range.  Lane 0 of each warp writes the warp's results.
#include <cuda_runtime.h>

__global__ void warp_vote_stats(const float* values, float* warp_sum, int* positives,
                                int* flags, int length) {
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int warp = gid / 32;
    float v = (gid < length) ? values[gid] : 0.0f;
    for (int delta = 16; delta >= 1; delta >>= 1) {
        v += __shfl_down_sync(__activemask(), v, delta);
    }
    unsigned pos = __ballot(gid < length && values[gid] > 0.0f);
    if (gid < length) {
        int big = __any(values[gid] > 2.5f);
        int bounded = __all_sync(__activemask(), fabsf(values[gid]) < 2.9f);
        if (lane == 0) {
            warp_sum[warp] = v;
            positives[warp] = __popc(pos);
            flags[warp] = big + 2 * bounded;
        }
    }
}

void launch_warp_vote_stats(const float* values, float* warp_sum, int* positives, int* flags,
                            int length) {
    warp_vote_stats<<<(length + 127) / 128, 128>>>(values, warp_sum, positives, flags, length);
}
