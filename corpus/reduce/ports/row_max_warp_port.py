"""NKI port of row_max_warp: rows on partitions, the max over the free axis on the vector engine
in 4096-column chunks combined with a running maximum."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def row_max_warp(in_):
    rows, cols = in_.shape
    P = nl.tile_size.pmax
    F = 4096
    rowmax = nl.ndarray((rows,), dtype=in_.dtype, buffer=nl.shared_hbm)
    rowmax_2d = rowmax.reshape((rows, 1))
    for r in range(0, rows, P):
        nr = min(P, rows - r)
        best = nl.ndarray((nr, 1), dtype=nl.float32, buffer=nl.sbuf)
        for c in range(0, cols, F):
            nc = min(F, cols - c)
            x_t = nl.ndarray((nr, nc), dtype=in_.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=x_t, src=in_[r : r + nr, c : c + nc])
            if c == 0:
                nisa.tensor_reduce(dst=best, op=nl.maximum, data=x_t, axis=1)
            else:
                part = nl.ndarray((nr, 1), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_reduce(dst=part, op=nl.maximum, data=x_t, axis=1)
                nisa.tensor_tensor(dst=best, data1=best, data2=part, op=nl.maximum)
        res = nl.ndarray((nr, 1), dtype=in_.dtype, buffer=nl.sbuf)
        nisa.tensor_copy(dst=res, src=best)
        nisa.dma_copy(dst=rowmax_2d[r : r + nr, :], src=res)
    return rowmax
