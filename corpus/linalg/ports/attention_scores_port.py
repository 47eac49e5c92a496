"""NKI port of attention_scores: S[h] = scale * Q[h] @ K[h].T with a causal mask.
Q and K blocks are DMA-transposed so the head dim D lies on partitions (tiled by 128 and
accumulated in PSUM); the scale is fused into the PSUM evacuation, the causal mask is an
affine_select on (row - col), and blocks entirely above the diagonal are only filled with -inf."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def attention_scores(Q, K, scale=0.125):
    BH, T, D = Q.shape
    TD = nl.tile_size.pmax
    TQ = nl.tile_size.gemm_stationary_fmax
    TS = nl.tile_size.gemm_moving_fmax
    DT = (D + TD - 1) // TD
    S = nl.ndarray((BH, T, T), dtype=nl.float32, buffer=nl.shared_hbm)
    for h in range(BH):
        for i in range(0, T, TQ):
            nq = min(TQ, T - i)
            q_t = nl.ndarray((TD, DT, TQ), dtype=Q.dtype, buffer=nl.sbuf)
            for dt in range(DT):
                d0 = dt * TD
                nd = min(TD, D - d0)
                nisa.dma_transpose(dst=q_t[0:nd, dt, 0:nq], src=Q[h, i : i + nq, d0 : d0 + nd])
            for s in range(0, T, TS):
                ns = min(TS, T - s)
                sc = nl.ndarray((TQ, TS), dtype=nl.float32, buffer=nl.sbuf)
                if s > i + nq - 1:
                    nisa.memset(dst=sc[0:nq, 0:ns], value=float("-inf"))
                    nisa.dma_copy(dst=S[h, i : i + nq, s : s + ns], src=sc[0:nq, 0:ns])
                    continue
                acc = nl.ndarray((TQ, TS), dtype=nl.float32, buffer=nl.psum)
                for dt in range(DT):
                    d0 = dt * TD
                    nd = min(TD, D - d0)
                    k_t = nl.ndarray((TD, TS), dtype=K.dtype, buffer=nl.sbuf)
                    nisa.dma_transpose(dst=k_t[0:nd, 0:ns], src=K[h, s : s + ns, d0 : d0 + nd])
                    nisa.nc_matmul(
                        dst=acc[0:nq, 0:ns],
                        stationary=q_t[0:nd, dt, 0:nq],
                        moving=k_t[0:nd, 0:ns],
                        accumulate=dt > 0,
                    )
                raw = nl.ndarray((TQ, TS), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=raw[0:nq, 0:ns], op=nl.copy, data=acc[0:nq, 0:ns], scale=scale)
                # keep where (i + p) - (s + j) >= 0, i.e. row >= column
                nisa.affine_select(
                    dst=sc[0:nq, 0:ns],
                    pattern=[[-1, ns]],
                    channel_multiplier=1,
                    on_true_tile=raw[0:nq, 0:ns],
                    on_false_value=float("-inf"),
                    cmp_op=nl.greater_equal,
                    offset=i - s,
                )
                nisa.dma_copy(dst=S[h, i : i + nq, s : s + ns], src=sc[0:nq, 0:ns])
    return S
