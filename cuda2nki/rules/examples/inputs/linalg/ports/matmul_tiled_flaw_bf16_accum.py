"""Flawed port of matmul_tiled: each K-tile's product is evacuated from PSUM and summed into a
bfloat16 SBUF accumulator (to "save SBUF"), so the K-sum is rounded to 8 bits of mantissa after
every tile. Only visible when K spans several 128-row tiles.

EXPECT: precision C2N4002 (bf16 accumulation); C2N5004
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_tiled(A, B):
    M, K = A.shape
    _, N = B.shape
    TK, TM, TN = 128, 128, 512
    C = nl.ndarray((M, N), dtype=A.dtype, buffer=nl.shared_hbm)
    for m in range(0, M, TM):
        mm = min(TM, M - m)
        for n in range(0, N, TN):
            nn = min(TN, N - n)
            acc = nl.ndarray((TM, TN), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.memset(dst=acc[0:mm, 0:nn], value=0.0)
            for k in range(0, K, TK):
                kk = min(TK, K - k)
                blk = nl.ndarray((TM, TK), dtype=A.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=blk[0:mm, 0:kk], src=A[m : m + mm, k : k + kk])
                blk_t = nl.ndarray((TK, TM), dtype=A.dtype, buffer=nl.psum)
                nisa.nc_transpose(dst=blk_t[0:kk, 0:mm], data=blk[0:mm, 0:kk])
                a_t = nl.ndarray((TK, TM), dtype=A.dtype, buffer=nl.sbuf)
                nisa.tensor_copy(dst=a_t[0:kk, 0:mm], src=blk_t[0:kk, 0:mm])
                b_t = nl.ndarray((TK, TN), dtype=B.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=b_t[0:kk, 0:nn], src=B[k : k + kk, n : n + nn])
                part = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
                nisa.nc_matmul(
                    dst=part[0:mm, 0:nn], stationary=a_t[0:kk, 0:mm], moving=b_t[0:kk, 0:nn]
                )
                nisa.tensor_tensor(
                    dst=acc[0:mm, 0:nn], data1=acc[0:mm, 0:nn], data2=part[0:mm, 0:nn], op=nl.add
                )
            c_t = nl.ndarray((TM, TN), dtype=C.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=c_t[0:mm, 0:nn], src=acc[0:mm, 0:nn])
            nisa.dma_copy(dst=C[m : m + mm, n : n + nn], src=c_t[0:mm, 0:nn])
    return C
