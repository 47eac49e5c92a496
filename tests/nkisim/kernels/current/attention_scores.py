"""Attention scores S = scale * Q @ K^T with head-dim-major inputs q (d, Sq) and k (d, Sk);
the scale is fused into the PSUM evacuation on the scalar engine."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def attention_scores_kernel(q, k, scale=0.125):
    d, Sq = q.shape
    d_, Sk = k.shape
    assert d == d_ and d <= nl.tile_size.pmax, "head dim must fit the partitions"
    TQ = nl.tile_size.gemm_stationary_fmax
    TS = nl.tile_size.gemm_moving_fmax
    out = nl.ndarray((Sq, Sk), dtype=nl.float32, buffer=nl.shared_hbm)
    for s in range(0, Sk, TS):
        ns = min(TS, Sk - s)
        k_t = nl.ndarray((d, TS), dtype=k.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=k_t[:, 0:ns], src=k[:, s : s + ns])
        for i in range(0, Sq, TQ):
            nq = min(TQ, Sq - i)
            q_t = nl.ndarray((d, TQ), dtype=q.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=q_t[:, 0:nq], src=q[:, i : i + nq])
            acc = nl.ndarray((TQ, TS), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_matmul(dst=acc[0:nq, 0:ns], stationary=q_t[:, 0:nq], moving=k_t[:, 0:ns])
            sc = nl.ndarray((TQ, TS), dtype=nl.float32, buffer=nl.sbuf)
            nisa.activation(dst=sc[0:nq, 0:ns], op=nl.copy, data=acc[0:nq, 0:ns], scale=scale)
            nisa.dma_copy(dst=out[i : i + nq, s : s + ns], src=sc[0:nq, 0:ns])
    return out
