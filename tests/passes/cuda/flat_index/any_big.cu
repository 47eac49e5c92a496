// A flag raised where any value of a [rows, 48] __device__ table passes 1, the table walked by a
// grid-stride loop over its flat index and read as tbl[k / 48][k % 48].
#include <cuda_runtime.h>

__device__ float tbl[128][48];

__global__ void any_big(int* hit, int rows) {
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < rows * 48; k += blockDim.x * gridDim.x) {
        if (tbl[k / 48][k % 48] > 1.0f) *hit = 1;
    }
}
