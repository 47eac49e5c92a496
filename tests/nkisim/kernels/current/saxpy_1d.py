"""out = alpha * x + y over 1-D vectors: full 128-partition blocks, then a one-partition tail."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def saxpy_kernel(x, y, alpha=2.0):
    (n,) = x.shape
    P = nl.tile_size.pmax
    F = 2048
    out = nl.ndarray((n,), dtype=y.dtype, buffer=nl.shared_hbm)
    base = 0
    while base < n:
        rest = n - base
        if rest >= P:
            rows, cols = P, min(F, rest // P)
        else:
            rows, cols = 1, rest
        cnt = rows * cols
        x_t = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.sbuf)
        y_t = nl.ndarray((rows, cols), dtype=y.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=x[base : base + cnt].reshape((rows, cols)))
        nisa.dma_copy(dst=y_t, src=y[base : base + cnt].reshape((rows, cols)))
        r_t = nl.ndarray((rows, cols), dtype=y.dtype, buffer=nl.sbuf)
        nisa.scalar_tensor_tensor(
            dst=r_t, data=x_t, op0=nl.multiply, operand0=alpha, op1=nl.add, operand1=y_t
        )
        nisa.dma_copy(dst=out[base : base + cnt].reshape((rows, cols)), src=r_t)
        base += cnt
    return out
