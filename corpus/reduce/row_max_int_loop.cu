// Largest entry of each row of an int matrix, one thread per row, the running maximum an int
// seeded with the smallest int (max() from CUDA's integer overloads).
#include <cuda_runtime.h>

__global__ void row_max_int_loop(const int* __restrict__ m, int* __restrict__ best, int nr, int nc) {
    const int r = threadIdx.x + blockIdx.x * blockDim.x;
    if (r < nr) {
        int top = -2147483647 - 1;
        for (int c = 0; c < nc; ++c) {
            top = max(top, m[r * nc + c]);
        }
        best[r] = top;
    }
}

void launch_row_max_int_loop(const int* m, int* best, int nr, int nc) {
    row_max_int_loop<<<(nr + 63) / 64, 64>>>(m, best, nr, nc);
}
