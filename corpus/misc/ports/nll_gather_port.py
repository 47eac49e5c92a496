"""NKI port of crossentropy_forward: (b, t) positions on partitions, one probability per
partition fetched by an indirect DMA.

probs is the flat (B, T, V) buffer.  The flat element offset of each position's target,
row * V + target, is built on chip (an iota over the partitions plus the loaded targets) and
drives a vector_offset gather from probs viewed as one column: each tile moves 4 bytes per
position, the element the loss uses."""

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
    column = probs.reshape((N * V, 1))
    tg_rows = targets.reshape((N, 1))
    out_rows = losses.reshape((N, 1))
    for r0 in range(0, N, P):
        n = min(P, N - r0)
        tg = nl.ndarray((n, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=tg, src=tg_rows[r0 : r0 + n, :])
        off = nl.ndarray((n, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.iota(dst=off, pattern=[[0, 1]], offset=r0 * V, channel_multiplier=V)
        nisa.tensor_tensor(dst=off, data1=off, data2=tg, op=nl.add)
        p = nl.ndarray((n, 1), dtype=probs.dtype, buffer=nl.sbuf)
        nisa.dma_copy(
            dst=p, src=column.ap(pattern=[[1, n], [1, 1]], offset=0, vector_offset=off, indirect_dim=0)
        )
        loss = nl.ndarray((n, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=loss, op=nl.log, data=p)
        nisa.tensor_scalar(dst=loss, data=loss, op0=nl.multiply, operand0=-1.0)
        nisa.dma_copy(dst=out_rows[r0 : r0 + n, :], src=loss)
    return losses
