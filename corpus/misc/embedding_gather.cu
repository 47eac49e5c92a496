// Token + position embedding (GPT-2 style encoder): out[b, t, :] = wte[inp[b, t], :] + wpe[t, :].
// Token ids are int32 and clamped into [0, V) defensively.
#include <cuda_runtime.h>

__global__ void encoder_forward(float* out, const int* inp, const float* wte, const float* wpe,
                                int B, int T, int C, int V) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < B * T * C) {
        int bt = idx / C;
        int b = bt / T;
        int t = bt % T;
        int c = idx % C;
        int ix = inp[b * T + t];
        ix = min(max(ix, 0), V - 1);
        out[idx] = wte[ix * C + c] + wpe[t * C + c];
    }
}

void launch_encoder_forward(float* out, const int* inp, const float* wte, const float* wpe, int B,
                            int T, int C, int V) {
    const int N = B * T * C;
    encoder_forward<<<(N + 255) / 256, 256>>>(out, inp, wte, wpe, B, T, C, V);
}
