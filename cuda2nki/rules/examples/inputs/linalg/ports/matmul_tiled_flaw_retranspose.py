"""Flawed port of matmul_tiled: the obvious m / n / k loop nest, with A's block loaded and
transposed (K onto partitions) inside the k loop, so the same block of A is transposed again for
every 512-column block of C instead of once per 128-row strip. The numbers are right; the
tensor engine repeats the transposes (N / 512 times) and the DMAs reload A.

EXPECT: pass; C2N5009 (transpose repeated across the n loop)
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_tiled(A, B):
    M, K = A.shape
    _, N = B.shape
    TK = nl.tile_size.pmax
    TM = nl.tile_size.gemm_stationary_fmax
    TN = nl.tile_size.gemm_moving_fmax
    C = nl.ndarray((M, N), dtype=A.dtype, buffer=nl.shared_hbm)
    for m in range(0, M, TM):
        mm = min(TM, M - m)
        for n in range(0, N, TN):
            nn = min(TN, N - n)
            acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for k in range(0, K, TK):
                kk = min(TK, K - k)
                a_blk = nl.ndarray((TM, TK), dtype=A.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=a_blk[0:mm, 0:kk], src=A[m : m + mm, k : k + kk])
                a_tp = nl.ndarray((TK, TM), dtype=A.dtype, buffer=nl.psum)
                nisa.nc_transpose(dst=a_tp[0:kk, 0:mm], data=a_blk[0:mm, 0:kk])
                a_t = nl.ndarray((TK, TM), dtype=A.dtype, buffer=nl.sbuf)
                nisa.tensor_copy(dst=a_t[0:kk, 0:mm], src=a_tp[0:kk, 0:mm])
                b_t = nl.ndarray((TK, TN), dtype=B.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=b_t[0:kk, 0:nn], src=B[k : k + kk, n : n + nn])
                nisa.nc_matmul(
                    dst=acc[0:mm, 0:nn],
                    stationary=a_t[0:kk, 0:mm],
                    moving=b_t[0:kk, 0:nn],
                    accumulate=k > 0,
                )
            c_t = nl.ndarray((TM, TN), dtype=C.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=c_t[0:mm, 0:nn], src=acc[0:mm, 0:nn])
            nisa.dma_copy(dst=C[m : m + mm, n : n + nn], src=c_t[0:mm, 0:nn])
    return C
