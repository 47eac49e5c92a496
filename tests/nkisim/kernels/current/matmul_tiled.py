"""C = lhsT.T @ rhs with K-tiles accumulated in one fp32 PSUM tile per (128 x 512) output block."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_tiled_kernel(lhsT, rhs):
    K, M = lhsT.shape
    K_, N = rhs.shape
    assert K == K_, "contraction sizes differ"
    TK = nl.tile_size.pmax
    TM = nl.tile_size.gemm_stationary_fmax
    TN = nl.tile_size.gemm_moving_fmax
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in range(0, M, TM):
        mm = min(TM, M - m)
        for n in range(0, N, TN):
            nn = min(TN, N - n)
            acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for k in range(0, K, TK):
                kk = min(TK, K - k)
                lhs_t = nl.ndarray((TK, TM), dtype=lhsT.dtype, buffer=nl.sbuf)
                rhs_t = nl.ndarray((TK, TN), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=lhs_t[0:kk, 0:mm], src=lhsT[k : k + kk, m : m + mm])
                nisa.dma_copy(dst=rhs_t[0:kk, 0:nn], src=rhs[k : k + kk, n : n + nn])
                nisa.nc_matmul(
                    dst=acc[0:mm, 0:nn],
                    stationary=lhs_t[0:kk, 0:mm],
                    moving=rhs_t[0:kk, 0:nn],
                    accumulate=k > 0,
                )
            res = nl.ndarray((TM, TN), dtype=out.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res[0:mm, 0:nn], src=acc[0:mm, 0:nn])
            nisa.dma_copy(dst=out[m : m + mm, n : n + nn], src=res[0:mm, 0:nn])
    return out
