"""Flawed port of matmul_tiled: B's tile is made the stationary operand and A^T the moving one,
so each PSUM block holds C^T (B_blk^T @ A_blk^T); the block is then copied out and turned
around with a tensor-engine transpose before the store. The numbers are right, but every
128 x 128 block of C pays for a transpose and a second PSUM round trip that swapping the two
matmul operands (stationary = A^T, moving = B) would not need -- and C's blocks are limited to
128 columns instead of a 512-wide PSUM bank.

EXPECT: pass; C2N5009 (transpose of the matmul result)
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_tiled(A, B):
    M, K = A.shape
    _, N = B.shape
    T = nl.tile_size.pmax
    KT = (K + T - 1) // T
    C = nl.ndarray((M, N), dtype=A.dtype, buffer=nl.shared_hbm)
    for m in range(0, M, T):
        mm = min(T, M - m)
        a_t = nl.ndarray((T, KT, T), dtype=A.dtype, buffer=nl.sbuf)
        for kt in range(KT):
            k = kt * T
            kk = min(T, K - k)
            blk = nl.ndarray((T, T), dtype=A.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=blk[0:mm, 0:kk], src=A[m : m + mm, k : k + kk])
            blk_t = nl.ndarray((T, T), dtype=A.dtype, buffer=nl.psum)
            nisa.nc_transpose(dst=blk_t[0:kk, 0:mm], data=blk[0:mm, 0:kk])
            nisa.tensor_copy(dst=a_t[0:kk, kt, 0:mm], src=blk_t[0:kk, 0:mm])
        for n in range(0, N, T):
            nn = min(T, N - n)
            acc = nl.ndarray((T, T), dtype=nl.float32, buffer=nl.psum)
            for kt in range(KT):
                k = kt * T
                kk = min(T, K - k)
                b_t = nl.ndarray((T, T), dtype=B.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=b_t[0:kk, 0:nn], src=B[k : k + kk, n : n + nn])
                nisa.nc_matmul(
                    dst=acc[0:nn, 0:mm],
                    stationary=b_t[0:kk, 0:nn],
                    moving=a_t[0:kk, kt, 0:mm],
                    accumulate=kt > 0,
                )
            c_tr = nl.ndarray((T, T), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=c_tr[0:nn, 0:mm], src=acc[0:nn, 0:mm])
            c_ps = nl.ndarray((T, T), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_transpose(dst=c_ps[0:mm, 0:nn], data=c_tr[0:nn, 0:mm])
            c_t = nl.ndarray((T, T), dtype=C.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=c_t[0:mm, 0:nn], src=c_ps[0:mm, 0:nn])
            nisa.dma_copy(dst=C[m : m + mm, n : n + nn], src=c_t[0:mm, 0:nn])
    return C
