// Cross-entropy gradient through a softmax, one grid-stride walk over every logit of a (B, T, V)
// batch: the per-row loss gradient and label are bound (B, T) and read at the flat row i / V.
#include <cuda_runtime.h>

__global__ void softmax_grad_stride(float* dx, const float* p, const float* dloss,
                                    const int* tgt, int B, int T, int V) {
    for (int i = threadIdx.x + blockIdx.x * blockDim.x; i < B * T * V;
         i += blockDim.x * gridDim.x) {
        int row = i / V;
        int v = i % V;
        float hit = (v == tgt[row]) ? 1.0f : 0.0f;
        dx[i] += (p[i] - hit) * dloss[row];
    }
}

void launch_softmax_grad_stride(float* dx, const float* p, const float* dloss, const int* tgt,
                                int B, int T, int V) {
    softmax_grad_stride<<<32, 256>>>(dx, p, dloss, tgt, B, T, V);
}
