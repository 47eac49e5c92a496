"""Flawed port of row_max_warp: the result of row tile r is stored one row further down
(`r + 1`, a leftover from a 1-based bound) and clipped to fit, so rowmax[0] is never written and
every other entry holds the previous row's maximum.

EXPECT: defect:shifted C2N4006 (by 1 element)
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def row_max_warp(in_):
    rows, cols = in_.shape
    P = nl.tile_size.pmax
    rowmax = nl.ndarray((rows,), dtype=in_.dtype, buffer=nl.shared_hbm)
    rowmax_2d = rowmax.reshape((rows, 1))
    for r in range(0, rows, P):
        nr = min(P, rows - r)
        x_t = nl.ndarray((nr, cols), dtype=in_.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=in_[r : r + nr, :])
        best = nl.ndarray((nr, 1), dtype=in_.dtype, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=best, op=nl.maximum, data=x_t, axis=1)
        hi = min(r + 1 + nr, rows)
        if hi > r + 1:
            nisa.dma_copy(dst=rowmax_2d[r + 1 : hi, :], src=best[0 : hi - r - 1, :])
    return rowmax
