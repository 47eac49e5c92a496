"""Flawed port of matmul_tiled: A and B are narrowed to bfloat16 on the way into SBUF "to use the
fast bf16 tensor-engine path" -- the CUDA kernel multiplies fp32 values. Accumulation stays fp32
in PSUM, but every input keeps only 8 bits of mantissa.

EXPECT: precision C2N4002 (bf16 inputs); C2N5005 narrowed inputs
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_tiled(A, B):
    M, K = A.shape
    K_, N = B.shape
    assert K == K_, "A and B disagree on K"
    TK = nl.tile_size.pmax
    TM = nl.tile_size.gemm_stationary_fmax
    TN = nl.tile_size.gemm_moving_fmax
    KT = (K + TK - 1) // TK
    C = nl.ndarray((M, N), dtype=A.dtype, buffer=nl.shared_hbm)
    for m in range(0, M, TM):
        mm = min(TM, M - m)
        a_t = nl.ndarray((TK, KT, TM), dtype=nl.bfloat16, buffer=nl.sbuf)
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
            acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for kt in range(KT):
                k = kt * TK
                kk = min(TK, K - k)
                b_t = nl.ndarray((TK, TN), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=b_t[0:kk, 0:nn], src=B[k : k + kk, n : n + nn])
                nisa.nc_matmul(
                    dst=acc[0:mm, 0:nn],
                    stationary=a_t[0:kk, kt, 0:mm],
                    moving=b_t[0:kk, 0:nn],
                    accumulate=kt > 0,
                )
            c_t = nl.ndarray((TM, TN), dtype=C.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=c_t[0:mm, 0:nn], src=acc[0:mm, 0:nn])
            nisa.dma_copy(dst=C[m : m + mm, n : n + nn], src=c_t[0:mm, 0:nn])
    return C
