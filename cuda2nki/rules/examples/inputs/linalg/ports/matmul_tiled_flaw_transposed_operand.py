"""Flawed port of matmul_tiled: stationary and moving are swapped (B's tile as stationary, A^T's
as moving), so each block holds (A_blk @ B_blk)^T. With 128 x 128 output blocks the shapes only
line up when a block is square, so it runs for square M == N and fails an operand-shape check
otherwise (C2N3014 at the nc_matmul).

EXPECT: defect:transposed C2N4005 (M == N <= 128); operand-size error C2N3014 otherwise
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_tiled(A, B):
    M, K = A.shape
    _, N = B.shape
    T = 128
    C = nl.ndarray((M, N), dtype=A.dtype, buffer=nl.shared_hbm)
    for m in range(0, M, T):
        mm = min(T, M - m)
        for n in range(0, N, T):
            nn = min(T, N - n)
            acc = nl.ndarray((T, T), dtype=nl.float32, buffer=nl.psum)
            for k in range(0, K, T):
                kk = min(T, K - k)
                blk = nl.ndarray((T, T), dtype=A.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=blk[0:mm, 0:kk], src=A[m : m + mm, k : k + kk])
                blk_t = nl.ndarray((T, T), dtype=A.dtype, buffer=nl.psum)
                nisa.nc_transpose(dst=blk_t[0:kk, 0:mm], data=blk[0:mm, 0:kk])
                a_t = nl.ndarray((T, T), dtype=A.dtype, buffer=nl.sbuf)
                nisa.tensor_copy(dst=a_t[0:kk, 0:mm], src=blk_t[0:kk, 0:mm])
                b_t = nl.ndarray((T, T), dtype=B.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=b_t[0:kk, 0:nn], src=B[k : k + kk, n : n + nn])
                nisa.nc_matmul(
                    dst=acc[0:mm, 0:nn],
                    stationary=b_t[0:kk, 0:nn],
                    moving=a_t[0:kk, 0:mm],
                    accumulate=k > 0,
                )
            c_t = nl.ndarray((T, T), dtype=C.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=c_t[0:mm, 0:nn], src=acc[0:mm, 0:nn])
            nisa.dma_copy(dst=C[m : m + mm, n : n + nn], src=c_t[0:mm, 0:nn])
    return C
