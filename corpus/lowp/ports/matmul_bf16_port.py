"""NKI port of matmul_bf16: C (bf16) = A @ B for bf16 A, B with fp32 accumulation. A's 128-row
strip is DMA-transposed once (K onto partitions, a 2-byte transpose), K-tiles accumulate in an
fp32 PSUM bank, and the result is rounded to bf16 once on the PSUM -> SBUF copy."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_bf16(A, B):
    M, K = A.shape
    K_, N = B.shape
    assert K == K_, "A and B disagree on K"
    TK = nl.tile_size.pmax
    TM = nl.tile_size.gemm_stationary_fmax
    TN = nl.tile_size.gemm_moving_fmax
    KT = (K + TK - 1) // TK
    C = nl.ndarray((M, N), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    for m in range(0, M, TM):
        mm = min(TM, M - m)
        a_t = nl.ndarray((TK, KT, TM), dtype=A.dtype, buffer=nl.sbuf)
        for kt in range(KT):
            k = kt * TK
            kk = min(TK, K - k)
            nisa.dma_transpose(dst=a_t[0:kk, kt, 0:mm], src=A[m : m + mm, k : k + kk])
        for n in range(0, N, TN):
            nn = min(TN, N - n)
            acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for kt in range(KT):
                k = kt * TK
                kk = min(TK, K - k)
                b_t = nl.ndarray((TK, TN), dtype=B.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=b_t[0:kk, 0:nn], src=B[k : k + kk, n : n + nn])
                nisa.nc_matmul(
                    dst=acc[0:mm, 0:nn],
                    stationary=a_t[0:kk, kt, 0:mm],
                    moving=b_t[0:kk, 0:nn],
                    accumulate=kt > 0,
                )
            c_t = nl.ndarray((TM, TN), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.tensor_copy(dst=c_t[0:mm, 0:nn], src=acc[0:mm, 0:nn])
            nisa.dma_copy(dst=C[m : m + mm, n : n + nn], src=c_t[0:mm, 0:nn])
    return C
