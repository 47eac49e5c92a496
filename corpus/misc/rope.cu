// Rotary position embedding on [T, H, D] activations: each thread rotates one (even, odd) pair
// of a head vector by angle t * theta^(-2p/D), using powf, cosf and sinf.
#include <cuda_runtime.h>

__global__ void rope_forward(float* out, const float* inp, int T, int H, int D, float theta) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int half = D / 2;
    if (idx >= T * H * half) return;
    int p = idx % half;
    int th = idx / half;
    int t = th / H;
    float freq = powf(theta, -2.0f * (float)p / (float)D);
    float ang = (float)t * freq;
    float c = cosf(ang);
    float s = sinf(ang);
    int base = th * D + 2 * p;
    float x0 = inp[base];
    float x1 = inp[base + 1];
    out[base] = x0 * c - x1 * s;
    out[base + 1] = x0 * s + x1 * c;
}

void launch_rope_forward(float* out, const float* inp, int T, int H, int D, float theta) {
    int pairs = T * H * (D / 2);
    rope_forward<<<(pairs + 255) / 256, 256>>>(out, inp, T, H, D, theta);
}
