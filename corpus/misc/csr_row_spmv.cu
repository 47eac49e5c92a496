// Sparse matrix-vector product y = A x with A in compressed sparse row form: one thread per row
// walks the row's nonzeros between two row offsets read from memory, so every thread runs its
// own number of iterations (a loop whose trip count depends on data).
#include <cuda_runtime.h>

__global__ void csr_row_spmv(const int* __restrict__ offsets, const int* __restrict__ cols,
                             const float* __restrict__ vals, const float* __restrict__ xv,
                             float* __restrict__ yv, int rows) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float dot = 0.0f;
        int stop = offsets[r + 1];
        for (int k = offsets[r]; k < stop; ++k) {
            dot += vals[k] * xv[cols[k]];
        }
        yv[r] = dot;
    }
}

void launch_csr_row_spmv(const int* offsets, const int* cols, const float* vals,
                         const float* xv, float* yv, int rows) {
    csr_row_spmv<<<(rows + 127) / 128, 128>>>(offsets, cols, vals, xv, yv, rows);
}
