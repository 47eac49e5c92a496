// Row softmax with the online (single-pass) max/normaliser recurrence: one 128-thread block per
// row; each thread folds its strided columns into (m, d), the block merges the pairs in shared
// memory, then every thread writes its normalised columns.
#include <cuda_runtime.h>

#define SM_THREADS 128
#define NEG_BIG (-3.402823466e38f)

__global__ void softmax_online(float* out, const float* inp, int N, int C) {
    __shared__ float s_max[SM_THREADS];
    __shared__ float s_sum[SM_THREADS];
    int row = blockIdx.x;
    int tid = threadIdx.x;
    if (row >= N) return;
    const float* x = inp + row * C;

    float m = NEG_BIG;
    float d = 0.0f;
    for (int c = tid; c < C; c += blockDim.x) {
        float v = x[c];
        float m_new = fmaxf(m, v);
        d = d * expf(m - m_new) + expf(v - m_new);
        m = m_new;
    }
    s_max[tid] = m;
    s_sum[tid] = d;
    __syncthreads();

    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            float m1 = s_max[tid];
            float m2 = s_max[tid + s];
            float mm = fmaxf(m1, m2);
            s_sum[tid] = s_sum[tid] * expf(m1 - mm) + s_sum[tid + s] * expf(m2 - mm);
            s_max[tid] = mm;
        }
        __syncthreads();
    }

    float row_max = s_max[0];
    float inv = 1.0f / s_sum[0];
    for (int c = tid; c < C; c += blockDim.x) {
        out[row * C + c] = expf(x[c] - row_max) * inv;
    }
}

void launch_softmax_online(float* out, const float* inp, int N, int C) {
    softmax_online<<<N, SM_THREADS>>>(out, inp, N, C);
}
