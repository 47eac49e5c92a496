"""Flawed port of matmul_tiled in the legacy beta-1 API (neuronxcc.nki): the CUDA inner product is
kept as a rank-1 update per k on the vector engine -- acc += A[:, k] * B[k, :], row k of B
broadcast to every partition.  Right in fp32, but K dependent vector instructions per tile and
the tensor engine idle.

EXPECT: pass; C2N5002 (no tensor-engine instruction)
"""

import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def matmul_tiled(A, B):
    M, K = A.shape
    _, N = B.shape
    TN = 512
    C = nl.ndarray((M, N), dtype=A.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_k = nl.arange(K)[None, :]
    i_n = nl.arange(TN)[None, :]
    for m in nl.affine_range((M + 127) // 128):
        r = m * 128 + i_p
        a_t = nl.load(A[r, i_k], mask=(r < M))
        for n in nl.affine_range((N + TN - 1) // TN):
            c = n * TN + i_n
            acc = nl.zeros((128, TN), dtype=nl.float32)
            for k in nl.sequential_range(K):
                b_row = nl.load(B[k, c], mask=(c < N))
                acc = nl.add(acc, nl.multiply(a_t[i_p, k], b_row, mask=(r < M) & (c < N)))
            nl.store(C[r, c], value=acc, mask=(r < M) & (c < N))
    return C
