"""NKI port of attention_scores: S[h] = scale * Q[h] @ K[h].T with a causal mask.

Per head, Q[h] and K[h] come in as contiguous 128-row tiles and are transposed once on the tensor
engine into SBUF tiles with the head dim D on partitions (D tiled by 128, accumulated in PSUM).
Each 128-query tile builds its whole row of scores in SBUF and is stored with one DMA: the scale
is fused into the PSUM evacuation, the causal mask is an affine_select on (row - col), and
blocks entirely above the diagonal are only filled with -inf."""

import nki
import nki.isa as nisa
import nki.language as nl


def _load_transposed(dst, src_h, T, D, P, DT):
    """dst[d, dt, t] = src_h[t, dt * 128 + d] for a (T, D) HBM view."""
    for t0 in range(0, T, P):
        nt = min(P, T - t0)
        rows = nl.ndarray((P, D), dtype=src_h.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=rows[0:nt, :], src=src_h[t0 : t0 + nt, :])
        for dt in range(DT):
            d0 = dt * P
            nd = min(P, D - d0)
            tp = nl.ndarray((P, P), dtype=src_h.dtype, buffer=nl.psum)
            nisa.nc_transpose(dst=tp[0:nd, 0:nt], data=rows[0:nt, d0 : d0 + nd])
            nisa.tensor_copy(dst=dst[0:nd, dt, t0 : t0 + nt], src=tp[0:nd, 0:nt])


@nki.jit
def attention_scores(Q, K, scale=0.125):
    BH, T, D = Q.shape
    P = nl.tile_size.pmax
    TS = nl.tile_size.gemm_moving_fmax
    DT = (D + P - 1) // P
    S = nl.ndarray((BH, T, T), dtype=nl.float32, buffer=nl.shared_hbm)
    for h in range(BH):
        q_t = nl.ndarray((P, DT, T), dtype=Q.dtype, buffer=nl.sbuf)
        k_t = nl.ndarray((P, DT, T), dtype=K.dtype, buffer=nl.sbuf)
        _load_transposed(q_t, Q[h], T, D, P, DT)
        _load_transposed(k_t, K[h], T, D, P, DT)
        for i in range(0, T, P):
            nq = min(P, T - i)
            row = nl.ndarray((P, T), dtype=nl.float32, buffer=nl.sbuf)
            for s in range(0, T, TS):
                ns = min(TS, T - s)
                if s > i + nq - 1:
                    nisa.memset(dst=row[0:nq, s : s + ns], value=float("-inf"))
                    continue
                acc = nl.ndarray((P, TS), dtype=nl.float32, buffer=nl.psum)
                for dt in range(DT):
                    nd = min(P, D - dt * P)
                    nisa.nc_matmul(
                        dst=acc[0:nq, 0:ns],
                        stationary=q_t[0:nd, dt, i : i + nq],
                        moving=k_t[0:nd, dt, s : s + ns],
                        accumulate=dt > 0,
                    )
                raw = nl.ndarray((P, TS), dtype=nl.float32, buffer=nl.sbuf)
                nisa.activation(dst=raw[0:nq, 0:ns], op=nl.copy, data=acc[0:nq, 0:ns], scale=scale)
                # keep where (i + p) - (s + j) >= 0, i.e. row >= column
                nisa.affine_select(
                    dst=row[0:nq, s : s + ns],
                    pattern=[[-1, ns]],
                    channel_multiplier=1,
                    on_true_tile=raw[0:nq, 0:ns],
                    on_false_value=float("-inf"),
                    cmp_op=nl.greater_equal,
                    offset=i - s,
                )
            nisa.dma_copy(dst=S[h, i : i + nq, :], src=row[0:nq, :])
    return S
