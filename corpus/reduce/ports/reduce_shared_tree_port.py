"""NKI port of reduce_shared_tree: partial[i] = sum of the i-th 256-element chunk. The chunks
become rows on partitions (128 chunks per tile) and are summed along the free axis on the vector
engine; a short last chunk is one extra one-row reduction."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def reduce_shared_tree(in_):
    (n,) = in_.shape
    CH = 256
    P = nl.tile_size.pmax
    n_full, rem = n // CH, n % CH
    nb = n_full + (1 if rem else 0)
    partial = nl.ndarray((nb,), dtype=in_.dtype, buffer=nl.shared_hbm)
    partial_2d = partial.reshape((nb, 1))
    chunks = in_[0 : n_full * CH].reshape((n_full, CH)) if n_full else None
    for r in range(0, n_full, P):
        nr = min(P, n_full - r)
        x_t = nl.ndarray((nr, CH), dtype=in_.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=chunks[r : r + nr, :])
        s_t = nl.ndarray((nr, 1), dtype=in_.dtype, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=s_t, op=nl.add, data=x_t, axis=1)
        nisa.dma_copy(dst=partial_2d[r : r + nr, :], src=s_t)
    if rem:
        x_r = nl.ndarray((1, rem), dtype=in_.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_r, src=in_[n_full * CH : n].reshape((1, rem)))
        s_r = nl.ndarray((1, 1), dtype=in_.dtype, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=s_r, op=nl.add, data=x_r, axis=1)
        nisa.dma_copy(dst=partial_2d[n_full : n_full + 1, :], src=s_r)
    return partial
