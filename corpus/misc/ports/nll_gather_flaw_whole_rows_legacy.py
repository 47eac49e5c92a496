"""Flawed port of crossentropy_forward in the legacy beta-1 API (neuronxcc.nki): each position's
whole probability row is loaded to use one element of it.

EXPECT: pass; C2N5014 (whole rows loaded for one element each)

The numbers are right: the target column is picked by comparing an iota over the row with the
target and summing the masked row.  But every tile moves V elements per position where the loss
needs one, V times the traffic of an indirect gather."""

import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def crossentropy_forward(probs, targets):
    B, T = targets.shape
    N = B * T
    V = probs.shape[0] // N
    losses = nl.ndarray((B, T), dtype=probs.dtype, buffer=nl.shared_hbm)
    tg_rows = targets.reshape((N, 1))
    out_rows = losses.reshape((N, 1))
    i_p = nl.arange(128)[:, None]
    i_v = nl.arange(V)[None, :]
    i_0 = nl.arange(1)[None, :]
    cols = nisa.iota(i_p * 0 + i_v, dtype=nl.float32)
    for t in nl.affine_range((N + 127) // 128):
        r = t * 128 + i_p
        rows = nl.load(probs[r * V + i_v], mask=(r < N))
        tg = nl.load(tg_rows[r, i_0], mask=(r < N), dtype=nl.float32)
        hit = nl.equal(cols, tg, dtype=nl.float32, mask=(r < N))
        p = nl.sum(nl.multiply(rows, hit, mask=(r < N)), axis=1, keepdims=True, mask=(r < N))
        loss = nl.multiply(nl.log(p, mask=(r < N)), -1.0, mask=(r < N))
        nl.store(out_rows[r, i_0], value=loss, mask=(r < N))
    return losses
