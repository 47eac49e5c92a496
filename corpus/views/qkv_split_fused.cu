// Fused QKV split: a (B, T, 3, H, D) projection read at the flat thread index of the three
// (B, H, T, D) outputs, whose digits give the row and the head; the three parts sit H * D apart.
#include <cuda_runtime.h>

__global__ void qkv_split_fused(float* q, float* k, float* v, const float* qkv,
                                int B, int T, int H, int D) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < B * H * T * D) {
        int e = idx % D;
        int t = (idx / D) % T;
        int h = (idx / (D * T)) % H;
        int b = idx / (D * T * H);
        int from = ((b * T + t) * 3 * H + h) * D + e;
        q[idx] = qkv[from];
        k[idx] = qkv[from + H * D];
        v[idx] = qkv[from + 2 * H * D];
    }
}

void launch_qkv_split_fused(float* q, float* k, float* v, const float* qkv,
                            int B, int T, int H, int D) {
    int n = B * H * T * D;
    qkv_split_fused<<<(n + 63) / 64, 64>>>(q, k, v, qkv, B, T, H, D);
}
