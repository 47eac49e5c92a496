"""y = gelu(x) on the scalar engine, rows on partitions, 2048-column chunks."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def gelu_kernel(x):
    M, N = x.shape
    P = nl.tile_size.pmax
    F = 2048
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for m in range(0, M, P):
        rows = min(P, M - m)
        for n in range(0, N, F):
            cols = min(F, N - n)
            x_t = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=x_t, src=x[m : m + rows, n : n + cols])
            y_t = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.sbuf)
            nisa.activation(dst=y_t, op=nl.gelu, data=x_t)
            nisa.dma_copy(dst=out[m : m + rows, n : n + cols], src=y_t)
    return out
