// A kernel template with two type parameters, both deduced from the launch's arguments (fp16
// inputs, fp32 output), calling activation helpers made visible by `using namespace` and
// defined in a C++17 nested namespace (`namespace nn::fn {`).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace nn::fn {
__device__ float gelu_tanh(float x) {
    float u = 0.7978845608f * (x + 0.044715f * x * x * x);
    return 0.5f * x * (1.0f + tanhf(u));
}
}  // namespace nn::fn

using namespace nn::fn;

template <typename Tin, typename Tout>
__global__ void convert_gelu(Tout* y, const Tin* a, const Tin* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    y[i] = (Tout)gelu_tanh((float)a[i] + (float)b[i]);
}

void launch_convert_gelu(float* y, const __half* a, const __half* b, int n) {
    convert_gelu<<<(n + 255) / 256, 256>>>(y, a, b, n);
}
