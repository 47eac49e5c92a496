"""NKI port of vector_add: out = a + b over a 1-D vector, 128 x F blocks plus a one-partition tail."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def vector_add(a, b):
    (N,) = a.shape
    P = nl.tile_size.pmax
    F = 2048
    out = nl.ndarray((N,), dtype=a.dtype, buffer=nl.shared_hbm)
    base = 0
    while base < N:
        rest = N - base
        rows, cols = (P, min(F, rest // P)) if rest >= P else (1, rest)
        cnt = rows * cols
        a_t = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.sbuf)
        b_t = nl.ndarray((rows, cols), dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a_t, src=a[base : base + cnt].reshape((rows, cols)))
        nisa.dma_copy(dst=b_t, src=b[base : base + cnt].reshape((rows, cols)))
        c_t = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=c_t, data1=a_t, data2=b_t, op=nl.add)
        nisa.dma_copy(dst=out[base : base + cnt].reshape((rows, cols)), src=c_t)
        base += cnt
    return out
