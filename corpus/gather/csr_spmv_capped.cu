// Sparse matrix (CSR) times a dense vector: a grid-stride loop over rows, each row's entries
// visited by a loop capped at a per-matrix maximum. The entry range of a row and the column of
// each entry are read from the index arrays: the vector is gathered through loaded data.
#include <cuda_runtime.h>

__global__ void spmv_csr_capped(const int* __restrict__ row_begin, const int* __restrict__ col_of,
                                const float* __restrict__ nz, const float* __restrict__ xv,
                                float* __restrict__ yv, int num_rows, int cap_per_row) {
    for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < num_rows;
         r += gridDim.x * blockDim.x) {
        const int lo = row_begin[r];
        const int hi = row_begin[r + 1];
        float dot = 0.0f;
        for (int t = 0; t < cap_per_row; ++t) {
            const int e = lo + t;
            if (e < hi) dot += nz[e] * xv[col_of[e]];
        }
        yv[r] = dot;
    }
}

void spmv_csr(const int* begin, const int* cols, const float* vals, const float* x, float* y,
              int rows, int cap) {
    const int threads = 64;
    spmv_csr_capped<<<(rows + threads - 1) / threads, threads>>>(begin, cols, vals, x, y, rows,
                                                                cap);
}
