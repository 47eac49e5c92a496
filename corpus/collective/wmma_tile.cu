// Tensor-core matrix multiply through the WMMA API (one warp per 16x16 tile, fp16 inputs, fp32
// accumulation; M, N, K multiples of 16).  The interpreter runs it; the port is refused.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

using namespace nvcuda;

__global__ void wmma_gemm(const half* a, const half* b, float* c, int M, int N, int K) {
    int warp_m = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int warp_n = blockIdx.y;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a_frag;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b_frag;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    if (warp_m * 16 >= M || warp_n * 16 >= N) return;
    for (int k = 0; k < K; k += 16) {
        wmma::load_matrix_sync(a_frag, a + warp_m * 16 * K + k, K);
        wmma::load_matrix_sync(b_frag, b + k * N + warp_n * 16, N);
        wmma::mma_sync(acc, a_frag, b_frag, acc);
    }
    wmma::store_matrix_sync(c + warp_m * 16 * N + warp_n * 16, acc, N, wmma::mem_row_major);
}

void launch_wmma_gemm(const half* a, const half* b, float* c, int M, int N, int K) {
    dim3 grid((M / 16 * 32 + 127) / 128, N / 16);
    wmma_gemm<<<grid, 128>>>(a, b, c, M, N, K);
}
