// Split step of a pack/split: each flagged element takes the source value at its scanned
// position. The positions come from a float scan (1-based), so the index is a float converted
// to int -- C truncates toward zero -- and unflagged elements keep what the output held.
#include <cuda_runtime.h>

__global__ void split_by_position(float* out, const float* src, const float* flags,
                                  const float* pos, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i >= n) return;
    if (flags[i] != 0.f) {
        int at = pos[i] - 1;
        out[i] = src[at];
    }
}

void launch_split_by_position(float* out, const float* src, const float* flags, const float* pos,
                              int n) {
    split_by_position<<<(n + 255) / 256, 256>>>(out, src, flags, pos, n);
}
