// Quantised matrix-vector product: each row holds `words` packed int8 quadruples, the vector
// the same; one thread per row accumulates __dp4a over the words and rescales to float.  A
// second output mixes 16-bit activations with int8 weights through __dp2a_lo / __dp2a_hi.
#include <cuda_runtime.h>

__global__ void int8_gemv(const int* __restrict__ packed_rows, const int* __restrict__ packed_vec,
                          const int* __restrict__ act16, float* __restrict__ result,
                          int* __restrict__ mixed, float scale, int rows, int words) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    int acc = 0;
    int wide = 0;
    for (int w = 0; w < words; ++w) {
        int q = packed_rows[row * words + w];
        acc = __dp4a(q, packed_vec[w], acc);
        wide = __dp2a_lo(act16[w], q, wide);
        wide = __dp2a_hi(act16[w], q, wide);
    }
    result[row] = scale * (float)acc;
    mixed[row] = wide;
}

void launch_int8_gemv(const int* packed_rows, const int* packed_vec, const int* act16,
                      float* result, int* mixed, float scale, int rows, int words) {
    int threads = 64;
    int blocks = (rows + threads - 1) / threads;
    int8_gemv<<<blocks, threads>>>(packed_rows, packed_vec, act16, result, mixed, scale, rows,
                                   words);
}
