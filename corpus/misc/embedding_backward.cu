// Embedding backward (scatter-add): dwte[ids[t], c] += dout[t, c] with float atomics, since
// repeated token ids hit the same row; ids outside [0, V) are skipped.
#include <cuda_runtime.h>

__global__ void embedding_backward(float* dwte, const float* dout, const int* ids, int T, int C,
                                   int V) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= T * C) return;
    int t = idx / C;
    int c = idx - t * C;
    int token = ids[t];
    if (token < 0 || token >= V) return;
    atomicAdd(&dwte[token * C + c], dout[idx]);
}

void launch_embedding_backward(float* dwte, const float* dout, const int* ids, int T, int C,
                               int V) {
    int total = T * C;
    embedding_backward<<<(total + 127) / 128, 128>>>(dwte, dout, ids, T, C, V);
}
