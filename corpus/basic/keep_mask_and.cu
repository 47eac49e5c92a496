// out[i] = x[i] * scale where keep[i] > 0.5; the other elements keep their value.  The index
// guard and the mask test share one && condition: keep[i] is read only where i < n.
#include <cuda_runtime.h>

__global__ void keep_mask_and(float* out, const float* x, const float* keep, float scale, int n) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n && keep[idx] > 0.5f) out[idx] = x[idx] * scale;
}

void launch_keep_mask_and(float* out, const float* x, const float* keep, float scale, int n) {
    keep_mask_and<<<(n + 255) / 256, 256>>>(out, x, keep, scale, n);
}
