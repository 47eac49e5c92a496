"""Flawed port of rmsnorm_forward: eps is added to the root mean square after the square root
(y = x / (sqrt(mean(x^2)) + eps) * w) instead of under it (rsqrt(mean(x^2) + eps)).  Rows of
ordinary magnitude agree to about eps / mean(x^2); rows whose mean square is near eps (tiny
activations) come out up to 40% too large.

EXPECT: defect C2N4001 (root cause: eps misplaced, on low-variance rows)
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def rmsnorm_forward(x, w, eps=1e-6):
    rows, C = x.shape
    P = nl.tile_size.pmax
    y = nl.ndarray((rows, C), dtype=x.dtype, buffer=nl.shared_hbm)
    w_t = nl.ndarray((P, C), dtype=w.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=w_t, src=w.reshape((1, C)).broadcast(0, P))
    eps_t = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=eps_t, value=float(eps))
    for r in range(0, rows, P):
        nr = min(P, rows - r)
        x_t = nl.ndarray((nr, C), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=x[r : r + nr, :])
        sq = nl.ndarray((nr, C), dtype=nl.float32, buffer=nl.sbuf)
        ss = nl.ndarray((nr, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(
            dst=sq,
            op=nl.square,
            data=x_t,
            reduce_op=nl.add,
            reduce_res=ss,
            reduce_cmd=nisa.reduce_cmd.reset_reduce,
        )
        rms = nl.ndarray((nr, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=rms, op=nl.sqrt, data=ss, scale=1.0 / C)
        nisa.tensor_tensor(dst=rms, data1=rms, data2=eps_t[0:nr, :], op=nl.add)
        rstd = nl.ndarray((nr, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=rstd, data=rms)
        y_t = nl.ndarray((nr, C), dtype=x.dtype, buffer=nl.sbuf)
        nisa.scalar_tensor_tensor(
            dst=y_t,
            data=x_t,
            op0=nl.multiply,
            operand0=rstd,
            op1=nl.multiply,
            operand1=w_t[0:nr, :],
        )
        nisa.dma_copy(dst=y[r : r + nr, :], src=y_t)
    return y
