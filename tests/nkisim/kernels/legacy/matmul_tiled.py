"""C = lhsT.T @ rhs (beta-1 API): psum += nl.matmul over K tiles; M/N tails masked."""

import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def matmul_tiled_kernel(lhsT, rhs):
    K, M = lhsT.shape
    K_, N = rhs.shape
    assert K == K_, "contraction sizes differ"
    TK = nl.tile_size.pmax
    TM = nl.tile_size.gemm_stationary_fmax
    TN = nl.tile_size.gemm_moving_fmax
    assert K % TK == 0, "K must be a multiple of 128"
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    i_k = nl.arange(TK)[:, None]
    i_m = nl.arange(TM)[None, :]
    i_n = nl.arange(TN)[None, :]
    i_om = nl.arange(TM)[:, None]
    for m in nl.affine_range((M + TM - 1) // TM):
        for n in nl.affine_range((N + TN - 1) // TN):
            res_psum = nl.zeros((TM, TN), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TK):
                lhs_t = nl.load(lhsT[k * TK + i_k, m * TM + i_m], mask=(m * TM + i_m < M))
                rhs_t = nl.load(rhs[k * TK + i_k, n * TN + i_n], mask=(n * TN + i_n < N))
                res_psum += nl.matmul(lhs_t, rhs_t, transpose_x=True)
            res = nl.copy(res_psum, dtype=out.dtype)
            nl.store(
                out[m * TM + i_om, n * TN + i_n],
                value=res,
                mask=(m * TM + i_om < M) & (n * TN + i_n < N),
            )
    return out
