"""Attention scores S = scale * Q @ K^T (beta-1 API), head-dim-major q (d, Sq), k (d, Sk)."""

import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def attention_scores_kernel(q, k, scale=0.125):
    d, Sq = q.shape
    d_, Sk = k.shape
    assert d == d_ and d <= 128, "head dim must fit the partitions"
    TQ, TS = 128, 512
    out = nl.ndarray((Sq, Sk), dtype=nl.float32, buffer=nl.shared_hbm)
    i_d = nl.arange(d)[:, None]
    i_q = nl.arange(TQ)[None, :]
    i_s = nl.arange(TS)[None, :]
    i_oq = nl.arange(TQ)[:, None]
    for s in nl.affine_range((Sk + TS - 1) // TS):
        k_t = nl.load(k[i_d, s * TS + i_s], mask=(s * TS + i_s < Sk))
        for i in nl.affine_range((Sq + TQ - 1) // TQ):
            q_t = nl.load(q[i_d, i * TQ + i_q], mask=(i * TQ + i_q < Sq))
            qk = nisa.nc_matmul(q_t, k_t)
            sc = nisa.activation(op=nl.copy, data=qk, scale=scale, dtype=nl.float32)
            nl.store(
                out[i * TQ + i_oq, s * TS + i_s],
                value=sc,
                mask=(i * TQ + i_oq < Sq) & (s * TS + i_s < Sk),
            )
    return out
