// Token plus position embedding over one flat index of a (B, T, C) output: the token ids are
// bound (B, T) and read at the merged row idx / C; the output is bound and written flat.
#include <cuda_runtime.h>

__global__ void embed_flat3d(float* out, const int* tok, const float* wte, const float* wpe,
                             int B, int T, int C) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < B * T * C) {
        int bt = idx / C;
        int t = bt % T;
        int c = idx % C;
        int ix = tok[bt];
        out[idx] = wte[ix * C + c] + wpe[t * C + c];
    }
}

void launch_embed_flat3d(float* out, const int* tok, const float* wte, const float* wpe, int B,
                         int T, int C) {
    embed_flat3d<<<(B * T * C + 255) / 256, 256>>>(out, tok, wte, wpe, B, T, C);
}
