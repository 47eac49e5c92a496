// Row argmax (greedy sampling): one warp per row, two warps per 64-thread block; lanes keep
// (value, index) pairs and reduce them with __shfl_down_sync, lower index winning ties.
#include <cfloat>
#include <cuda_runtime.h>

__global__ void argmax_rows(const float* __restrict__ logits, int* __restrict__ out_idx, int rows,
                            int V) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (warp >= rows) return;
    const float* row = logits + warp * V;
    float best = -FLT_MAX;
    int best_i = V;
    for (int v = lane; v < V; v += 32) {
        float x = row[v];
        if (x > best) {
            best = x;
            best_i = v;
        }
    }
    for (int off = 16; off > 0; off >>= 1) {
        float other = __shfl_down_sync(0xffffffff, best, off);
        int other_i = __shfl_down_sync(0xffffffff, best_i, off);
        if (other > best || (other == best && other_i < best_i)) {
            best = other;
            best_i = other_i;
        }
    }
    if (lane == 0) out_idx[warp] = best_i;
}

void launch_argmax_rows(const float* logits, int* out_idx, int rows, int V) {
    argmax_rows<<<(rows * 32 + 63) / 64, 64>>>(logits, out_idx, rows, V);
}
