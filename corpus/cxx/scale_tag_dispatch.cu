// A template kernel launched from a generic lambda: the block size is a compile-time tag
// (`std::integral_constant<int, N>`) that a dispatcher picks from a run-time value and passes to
// the lambda, which reads it as `tag.value` through a constexpr local.
#include <cuda_runtime.h>
#include <type_traits>

template <int THREADS>
__global__ void scale_tagged(float* y, const float* x, float a, int n) {
    int i = blockIdx.x * THREADS + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}

template <class Launch>
void with_block_size(int threads, Launch&& launch) {
    switch (threads) {
        case 64:
            launch(std::integral_constant<int, 64>{});
            break;
        case 128:
            launch(std::integral_constant<int, 128>{});
            break;
        default:
            launch(std::integral_constant<int, 256>{});
            break;
    }
}

void launch_scale_tagged(float* y, const float* x, float a, int n, int threads) {
    auto body = [&](auto tag) {
        constexpr int T = tag.value;
        scale_tagged<T><<<(n + T - 1) / T, T>>>(y, x, a, n);
    };
    with_block_size(threads, body);
}
