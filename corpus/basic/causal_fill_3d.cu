// Causal mask on a 3-D grid: blockIdx.z walks (batch, head) pairs, blockIdx.y the query, the
// threads of a block the keys.  Two separate ifs with opposite conditions write the output:
// the past keeps its score, shifted, the future gets a fill value.
#include <cuda_runtime.h>

__global__ void causal_fill_3d(float* out, const float* att, float shift, float fill,
                               int BH, int T) {
    int k = threadIdx.x + blockIdx.x * blockDim.x;
    int q = blockIdx.y;
    int bh = blockIdx.z;
    if (k < T && bh < BH) {
        size_t at = ((size_t)bh * T + q) * T + k;
        if (q < k) {
            out[at] = fill;
        }
        if (k <= q) {
            out[at] = att[at] + shift;
        }
    }
}

void launch_causal_fill_3d(float* out, const float* att, float shift, float fill,
                           int BH, int T) {
    dim3 grid((T + 31) / 32, T, BH);
    causal_fill_3d<<<grid, 32>>>(out, att, shift, fill, BH, T);
}
