"""Flawed port of matmul_tiled: the CUDA inner product loop is kept as a rank-1 update per k on
the vector engine (C_tile += A[:, k] * B[k, :], row k of B broadcast to every partition).
Numerically fine in fp32, but K dependent vector instructions per tile and the tensor engine idle.

EXPECT: pass; C2N5002 (no tensor-engine instruction)
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_tiled(A, B):
    M, K = A.shape
    _, N = B.shape
    P = nl.tile_size.pmax
    TN = 512
    C = nl.ndarray((M, N), dtype=A.dtype, buffer=nl.shared_hbm)
    for m in range(0, M, P):
        mm = min(P, M - m)
        a_t = nl.ndarray((mm, K), dtype=A.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a_t, src=A[m : m + mm, :])
        for n in range(0, N, TN):
            nn = min(TN, N - n)
            acc = nl.ndarray((mm, nn), dtype=nl.float32, buffer=nl.sbuf)
            nisa.memset(dst=acc, value=0.0)
            for k in range(K):
                b_row = nl.ndarray((mm, nn), dtype=B.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=b_row, src=B[k : k + 1, n : n + nn].broadcast(0, mm))
                nisa.scalar_tensor_tensor(
                    dst=acc,
                    data=b_row,
                    op0=nl.multiply,
                    operand0=a_t[:, k : k + 1],
                    op1=nl.add,
                    operand1=acc,
                )
            c_t = nl.ndarray((mm, nn), dtype=C.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=c_t, src=acc)
            nisa.dma_copy(dst=C[m : m + mm, n : n + nn], src=c_t)
    return C
