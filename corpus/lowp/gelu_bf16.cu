// GELU (tanh approximation) on bf16 storage: load bf16, compute in fp32, round back to bf16.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

__global__ void gelu_bf16(__nv_bfloat16* out, const __nv_bfloat16* inp, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) return;
    float x = __bfloat162float(inp[i]);
    float cube = 0.044715f * x * x * x;
    float y = 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + cube)));
    out[i] = __float2bfloat16(y);
}

void launch_gelu_bf16(__nv_bfloat16* out, const __nv_bfloat16* inp, int N) {
    gelu_bf16<<<(N + 255) / 256, 256>>>(out, inp, N);
}
