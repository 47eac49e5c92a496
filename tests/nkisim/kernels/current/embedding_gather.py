"""Embedding lookup out[t, :] = table[ids[t], :] with an indirect (per-partition row) DMA."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def embedding_gather_kernel(table, ids):
    V, D = table.shape
    (T,) = ids.shape
    P = nl.tile_size.pmax
    out = nl.ndarray((T, D), dtype=table.dtype, buffer=nl.shared_hbm)
    for t in range(0, T, P):
        rows = min(P, T - t)
        idx = nl.ndarray((rows, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.dma_copy(dst=idx, src=ids[t : t + rows].reshape((rows, 1)))
        emb = nl.ndarray((rows, D), dtype=table.dtype, buffer=nl.sbuf)
        nisa.dma_copy(
            dst=emb,
            src=table.ap(pattern=[[D, rows], [1, D]], offset=0, vector_offset=idx, indirect_dim=0),
        )
        nisa.dma_copy(dst=out[t : t + rows, :], src=emb)
    return out
