"""Flawed port of column_sum: the matrix is loaded rows-on-partitions and reduced along the free
axis -- row sums instead of column sums -- and written to colsum tile by tile. Only the first
min(rows, cols) entries are written at all.

EXPECT: defect C2N4001 or C2N4009 (row sums: wrong reduction axis)
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def column_sum(mat):
    rows, cols = mat.shape
    P = nl.tile_size.pmax
    colsum = nl.ndarray((cols,), dtype=mat.dtype, buffer=nl.shared_hbm)
    colsum_2d = colsum.reshape((cols, 1))
    for r in range(0, min(rows, cols), P):
        nr = min(P, min(rows, cols) - r)
        x_t = nl.ndarray((nr, cols), dtype=mat.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=mat[r : r + nr, :])
        s_t = nl.ndarray((nr, 1), dtype=mat.dtype, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=s_t, op=nl.add, data=x_t, axis=1)
        nisa.dma_copy(dst=colsum_2d[r : r + nr, :], src=s_t)
    return colsum
