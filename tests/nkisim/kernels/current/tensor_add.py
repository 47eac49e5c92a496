"""Elementwise a + b over a 2-D tensor, 128-row by 512-column tiles with ragged edges."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def tensor_add_kernel(a, b):
    M, N = a.shape
    out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)
    P = nl.tile_size.pmax
    F = 512
    for m in range(0, M, P):
        rows = min(P, M - m)
        for n in range(0, N, F):
            cols = min(F, N - n)
            a_t = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.sbuf)
            b_t = nl.ndarray((P, F), dtype=b.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=a_t[0:rows, 0:cols], src=a[m : m + rows, n : n + cols])
            nisa.dma_copy(dst=b_t[0:rows, 0:cols], src=b[m : m + rows, n : n + cols])
            c_t = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(
                dst=c_t[0:rows, 0:cols],
                data1=a_t[0:rows, 0:cols],
                data2=b_t[0:rows, 0:cols],
                op=nl.add,
            )
            nisa.dma_copy(dst=out[m : m + rows, n : n + cols], src=c_t[0:rows, 0:cols])
    return out
