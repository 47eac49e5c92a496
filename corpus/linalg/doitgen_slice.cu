// PolyBench doitgen, one launch per slice r: sum[r][q][p] = sum_s A[r][q][s] * C4[s][p], the
// slice chosen by a scalar argument, the sum zeroed and accumulated in global memory.
#include <cuda_runtime.h>

__global__ void doitgen_kernel1(int nr, int nq, int np, float* sum, const float* A,
                                const float* C4, int r) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    int q = blockIdx.y * blockDim.y + threadIdx.y;
    if ((p < np) && (q < nq)) {
        sum[r * (nq * np) + q * np + p] = 0.0f;
        for (int s = 0; s < np; s++) {
            sum[r * (nq * np) + q * np + p] =
                sum[r * (nq * np) + q * np + p] + A[r * (nq * np) + q * np + s] * C4[s * np + p];
        }
    }
}

void launch_doitgen(int nr, int nq, int np, float* sum, const float* A, const float* C4) {
    dim3 block(32, 8);
    dim3 grid((np + 31) / 32, (nq + 7) / 8);
    for (int r = 0; r < nr; r++) {
        doitgen_kernel1<<<grid, block>>>(nr, nq, np, sum, A, C4, r);
    }
}
