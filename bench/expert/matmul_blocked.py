"""C (bf16) = A @ B for bf16 A [M, K], B [K, N] with fp32 accumulation, blocked for reuse.

The techniques of the NKI performance guide: the moving operand's column block (all of K) stays
resident in SBUF while every 128-row block of A streams past it; each 128-row block of A is
loaded by one DMA and transposed on the tensor engine once, into the stationary layout
[K-tile, 128, rows]; PSUM accumulators are evacuated alternately by the vector and the scalar
engine; a row block of C is staged in SBUF and stored by one DMA.
"""

import nki
import nki.isa as nisa
import nki.language as nl

#: bytes per partition the resident block of B may take
RESIDENT_BYTES = 96 * 1024


@nki.jit
def matmul_blocked_kernel(a, b):
    M, K = a.shape
    _, N = b.shape
    P = nl.tile_size.pmax
    TM = nl.tile_size.gemm_stationary_fmax
    TN = nl.tile_size.gemm_moving_fmax
    KT = (K + P - 1) // P
    chunks = max(1, RESIDENT_BYTES // (2 * TN * KT))
    block_n = min(N, chunks * TN)
    out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)
    for n0 in range(0, N, block_n):
        nb = min(block_n, N - n0)
        b_res = nl.ndarray((P, KT, nb), dtype=b.dtype, buffer=nl.sbuf)
        for kt in range(KT):
            kk = min(P, K - kt * P)
            nisa.dma_copy(dst=b_res[0:kk, kt, 0:nb], src=b[kt * P : kt * P + kk, n0 : n0 + nb])
        for m0 in range(0, M, TM):
            mm = min(TM, M - m0)
            a_rows = nl.ndarray((mm, K), dtype=a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=a_rows, src=a[m0 : m0 + mm, 0:K])
            a_t = nl.ndarray((P, KT, mm), dtype=a.dtype, buffer=nl.sbuf)
            for kt in range(KT):
                kk = min(P, K - kt * P)
                tp = nl.ndarray((kk, mm), dtype=a.dtype, buffer=nl.psum)
                nisa.nc_transpose(dst=tp, data=a_rows[0:mm, kt * P : kt * P + kk])
                if kt % 2 == 0:
                    nisa.tensor_copy(dst=a_t[0:kk, kt, 0:mm], src=tp)
                else:
                    nisa.activation(dst=a_t[0:kk, kt, 0:mm], op=nl.copy, data=tp)
            c_rows = nl.ndarray((mm, nb), dtype=a.dtype, buffer=nl.sbuf)
            for j, c0 in enumerate(range(0, nb, TN)):
                cn = min(TN, nb - c0)
                acc = nl.ndarray((mm, cn), dtype=nl.float32, buffer=nl.psum)
                for kt in range(KT):
                    kk = min(P, K - kt * P)
                    nisa.nc_matmul(
                        dst=acc,
                        stationary=a_t[0:kk, kt, 0:mm],
                        moving=b_res[0:kk, kt, c0 : c0 + cn],
                        accumulate=kt > 0,
                    )
                if j % 2 == 0:
                    nisa.activation(dst=c_rows[0:mm, c0 : c0 + cn], op=nl.copy, data=acc)
                else:
                    nisa.tensor_copy(dst=c_rows[0:mm, c0 : c0 + cn], src=acc)
            nisa.dma_copy(dst=out[m0 : m0 + mm, n0 : n0 + nb], src=c_rows)
    return out
