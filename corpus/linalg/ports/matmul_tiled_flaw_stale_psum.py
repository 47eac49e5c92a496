"""Flawed port of matmul_tiled: the PSUM accumulator is allocated once, outside the block loops
(like hoisting `float sum = 0` out of the CUDA tile loop), and nc_matmul keeps its default
accumulate=None. The first block is right (first write overwrites); every later block adds onto
the previous block's partial sums in the same PSUM bank.

EXPECT: defect:tiles C2N4008 or C2N4001 (blocks after the first; needs M > 128 or N > 512)
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_tiled(A, B):
    M, K = A.shape
    _, N = B.shape
    TK, TM, TN = 128, 128, 512
    KT = (K + TK - 1) // TK
    C = nl.ndarray((M, N), dtype=A.dtype, buffer=nl.shared_hbm)
    acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
    for m in range(0, M, TM):
        mm = min(TM, M - m)
        a_t = nl.ndarray((TK, KT, TM), dtype=A.dtype, buffer=nl.sbuf)
        for kt in range(KT):
            k = kt * TK
            kk = min(TK, K - k)
            blk = nl.ndarray((TM, TK), dtype=A.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=blk[0:mm, 0:kk], src=A[m : m + mm, k : k + kk])
            blk_t = nl.ndarray((TK, TM), dtype=A.dtype, buffer=nl.psum)
            nisa.nc_transpose(dst=blk_t[0:kk, 0:mm], data=blk[0:mm, 0:kk])
            nisa.tensor_copy(dst=a_t[0:kk, kt, 0:mm], src=blk_t[0:kk, 0:mm])
        for n in range(0, N, TN):
            nn = min(TN, N - n)
            for kt in range(KT):
                k = kt * TK
                kk = min(TK, K - k)
                b_t = nl.ndarray((TK, TN), dtype=B.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=b_t[0:kk, 0:nn], src=B[k : k + kk, n : n + nn])
                nisa.nc_matmul(
                    dst=acc[0:mm, 0:nn], stationary=a_t[0:kk, kt, 0:mm], moving=b_t[0:kk, 0:nn]
                )
            c_t = nl.ndarray((TM, TN), dtype=C.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=c_t[0:mm, 0:nn], src=acc[0:mm, 0:nn])
            nisa.dma_copy(dst=C[m : m + mm, n : n + nn], src=c_t[0:mm, 0:nn])
    return C
