"""NKI port of crossentropy_forward that loads each position's whole probability row to use
one element of it.

EXPECT: pass; C2N5014 (whole rows loaded for one element each)

The numbers are right: a one-hot mask of the target column (an iota over the row compared with
the target) picks the element, summed along the row.  But every tile moves V elements per
position where the loss needs one, V times the traffic of an indirect gather."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def crossentropy_forward(probs, targets):
    B, T = targets.shape
    N = B * T
    V = probs.shape[0] // N
    P = nl.tile_size.pmax
    losses = nl.ndarray((B, T), dtype=probs.dtype, buffer=nl.shared_hbm)
    rows_hbm = probs.reshape((N, V))
    tg_rows = targets.reshape((N, 1))
    out_rows = losses.reshape((N, 1))
    for r0 in range(0, N, P):
        n = min(P, N - r0)
        rows = nl.ndarray((n, V), dtype=probs.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=rows, src=rows_hbm[r0 : r0 + n, :])
        tg = nl.ndarray((n, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=tg, src=tg_rows[r0 : r0 + n, :])
        tgf = nl.ndarray((n, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=tgf, src=tg)
        cols = nl.ndarray((n, V), dtype=nl.float32, buffer=nl.sbuf)
        nisa.iota(dst=cols, pattern=[[1, V]], offset=0)
        hit = nl.ndarray((n, V), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=hit, data=cols, op0=nl.equal, operand0=tgf)
        picked = nl.ndarray((n, V), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=picked, data1=rows, data2=hit, op=nl.multiply)
        p = nl.ndarray((n, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=p, op=nl.add, data=picked, axis=1)
        loss = nl.ndarray((n, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=loss, op=nl.log, data=p)
        nisa.tensor_scalar(dst=loss, data=loss, op0=nl.multiply, operand0=-1.0)
        nisa.dma_copy(dst=out_rows[r0 : r0 + n, :], src=loss)
    return losses
