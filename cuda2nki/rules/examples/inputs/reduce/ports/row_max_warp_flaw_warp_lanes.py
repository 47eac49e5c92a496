"""Flawed port of row_max_warp: rows are on the partitions as they should be, but the CUDA warp
is carried over: each row's columns are folded into 32 "lanes" by a loop that walks 32 columns
at a time (the lanes' stride loop), and the lanes are then combined by a butterfly of halving
steps (the __shfl_xor_sync loop). The result is exact; the engines run cols / 32 + 5 narrow
instructions per row tile where one tensor_reduce would do.

EXPECT: pass; C2N5011 (lane-stride and shuffle loops)
"""

import nki
import nki.isa as nisa
import nki.language as nl

WARP = 32


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
        lanes = nl.ndarray((nr, WARP), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=lanes, value=-3.402823466e38)
        for c in range(0, cols, WARP):
            w = min(WARP, cols - c)
            nisa.tensor_tensor(
                dst=lanes[:, 0:w], data1=lanes[:, 0:w], data2=x_t[:, c : c + w], op=nl.maximum
            )
        for off in (16, 8, 4, 2, 1):
            nisa.tensor_tensor(
                dst=lanes[:, 0:off],
                data1=lanes[:, 0:off],
                data2=lanes[:, off : 2 * off],
                op=nl.maximum,
            )
        res = nl.ndarray((nr, 1), dtype=in_.dtype, buffer=nl.sbuf)
        nisa.tensor_copy(dst=res, src=lanes[:, 0:1])
        nisa.dma_copy(dst=rowmax_2d[r : r + nr, :], src=res)
    return rowmax
