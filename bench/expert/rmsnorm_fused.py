"""y = x * rsqrt(mean(x^2) + eps) * w per row of fp32 x [rows, C] (the corpus RMS norm).

The techniques of the NKI RMS-norm tutorial and performance guide: one DMA per 128-row tile;
the sum of squares as the free reduction of a ``square`` activation on the scalar engine (no
separate reduce pass); ``rsqrt(ss / C + eps)`` on the per-partition column; the two scalings
fused into one vector instruction, ``(x * rstd) * w`` (``scalar_tensor_tensor``); ``w``
broadcast to all partitions once, outside the row loop.
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def rmsnorm_fused_kernel(x, w, eps=1e-6):
    rows_total, C = x.shape
    P = nl.tile_size.pmax
    y = nl.ndarray((rows_total, C), dtype=x.dtype, buffer=nl.shared_hbm)
    rows0 = min(P, rows_total)
    w_t = nl.ndarray((rows0, C), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=w_t, src=w.ap(pattern=[[0, rows0], [1, C]], offset=0))
    for r0 in range(0, rows_total, P):
        rows = min(P, rows_total - r0)
        x_t = nl.ndarray((rows, C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=x[r0 : r0 + rows, 0:C])
        sq = nl.ndarray((rows, C), dtype=nl.float32, buffer=nl.sbuf)
        ss = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(
            dst=sq,
            op=nl.square,
            data=x_t,
            reduce_op=nl.add,
            reduce_res=ss,
            reduce_cmd=nisa.reduce_cmd.reset_reduce,
        )
        r = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(
            dst=r, data=ss, op0=nl.multiply, operand0=1.0 / C, op1=nl.add, operand1=eps
        )
        nisa.activation(dst=r, op=nl.rsqrt, data=r)
        y_t = nl.ndarray((rows, C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.scalar_tensor_tensor(
            dst=y_t,
            data=x_t,
            op0=nl.multiply,
            operand0=r,
            op1=nl.multiply,
            operand1=w_t[0:rows, 0:C],
        )
        nisa.dma_copy(dst=y[r0 : r0 + rows, 0:C], src=y_t)
    return y
