// Scales attention scores in place and masks the future: one thread per element of a flat
// (B, NH, T, T) tensor, the key and query positions found with / and % (a local re-assigned
// once), and complementary branches on them (-INFINITY above the diagonal, scaled below).
#include <cuda_runtime.h>
#include <math.h>

__global__ void causal_scale_flat(float* scores, float scale, int B, int NH, int T) {
    int gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid < B * NH * T * T) {
        int within = gid % (NH * T * T);
        within = within % (T * T);
        int query = within / T;
        int key = within % T;
        if (key > query) {
            scores[gid] = -INFINITY;
        } else {
            scores[gid] *= scale;
        }
    }
}

void launch_causal_scale_flat(float* scores, float scale, int B, int NH, int T) {
    int total = B * NH * T * T;
    causal_scale_flat<<<(total + 255) / 256, 256>>>(scores, scale, B, NH, T);
}
