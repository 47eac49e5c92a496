// Cross-entropy over a (B, T, V) batch walked by one flat row index (llm.c style): the host binds
// the targets (B, T) while the kernel reads them at the flat row n < B*T, and recomputes the row
// as b * T + t from its own quotient and remainder.
#include <cuda_runtime.h>

__global__ void nll_merged_rows(float* nll, const float* prob, const int* label, int B, int T,
                                int V) {
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    if (n < B * T) {
        int b = n / T;
        int t = n % T;
        const float* row = prob + b * T * V + t * V;
        int y = label[b * T + t];
        nll[n] = -logf(row[y]);
    }
}

void launch_nll_merged_rows(float* nll, const float* prob, const int* label, int B, int T, int V) {
    nll_merged_rows<<<(B * T + 127) / 128, 128>>>(nll, prob, label, B, T, V);
}
