"""C (fp32) = A @ B for bf16 A (M, K), B (K, N): A's row strip is transposed once per 128 rows by
DMA into a K-major SBUF tile, K-tiles accumulate in fp32 PSUM."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_bf16_kernel(a, b):
    M, K = a.shape
    K_, N = b.shape
    assert K == K_, "contraction sizes differ"
    TK = nl.tile_size.pmax
    TM = nl.tile_size.gemm_stationary_fmax
    TN = nl.tile_size.gemm_moving_fmax
    KT = (K + TK - 1) // TK
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in range(0, M, TM):
        mm = min(TM, M - m)
        a_t = nl.ndarray((TK, KT, TM), dtype=a.dtype, buffer=nl.sbuf)
        for kt in range(KT):
            k = kt * TK
            kk = min(TK, K - k)
            nisa.dma_transpose(dst=a_t[0:kk, kt, 0:mm], src=a[m : m + mm, k : k + kk])
        for n in range(0, N, TN):
            nn = min(TN, N - n)
            acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for kt in range(KT):
                k = kt * TK
                kk = min(TK, K - k)
                b_t = nl.ndarray((TK, TN), dtype=b.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=b_t[0:kk, 0:nn], src=b[k : k + kk, n : n + nn])
                nisa.nc_matmul(
                    dst=acc[0:mm, 0:nn],
                    stationary=a_t[0:kk, kt, 0:mm],
                    moving=b_t[0:kk, 0:nn],
                    accumulate=kt > 0,
                )
            res = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res[0:mm, 0:nn], src=acc[0:mm, 0:nn])
            nisa.dma_copy(dst=out[m : m + mm, n : n + nn], src=res[0:mm, 0:nn])
    return out
