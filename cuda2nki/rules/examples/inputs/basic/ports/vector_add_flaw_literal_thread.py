"""Flawed port of vector_add: a literal translation of the CUDA thread grid -- each CUDA block
of threads becomes a tile with one element per partition (128 x 1), so every DMA moves 4 bytes
per partition and every vector instruction processes a single element per lane.

EXPECT: pass; C2N5001 C2N5007 (one element per partition)
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def vector_add(a, b):
    (N,) = a.shape
    P = nl.tile_size.pmax
    out = nl.ndarray((N,), dtype=a.dtype, buffer=nl.shared_hbm)
    a_2d = a.reshape((N, 1))
    b_2d = b.reshape((N, 1))
    out_2d = out.reshape((N, 1))
    for block in range((N + P - 1) // P):
        i = block * P
        n = min(P, N - i)
        a_t = nl.ndarray((n, 1), dtype=a.dtype, buffer=nl.sbuf)
        b_t = nl.ndarray((n, 1), dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a_t, src=a_2d[i : i + n, :])
        nisa.dma_copy(dst=b_t, src=b_2d[i : i + n, :])
        c_t = nl.ndarray((n, 1), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=c_t, data1=a_t, data2=b_t, op=nl.add)
        nisa.dma_copy(dst=out_2d[i : i + n, :], src=c_t)
    return out
