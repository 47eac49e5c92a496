"""NKI port of rmsnorm_forward: the square's row sums come from the scalar engine's reduce,
rsqrt(sum/C + eps) in one activation, then x * rstd * w in one scalar_tensor_tensor."""

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
        rstd = nl.ndarray((nr, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=rstd, op=nl.rsqrt, data=ss, scale=1.0 / C, bias=eps_t[0:nr, :])
        y_t = nl.ndarray((nr, C), dtype=x.dtype, buffer=nl.sbuf)
        nisa.scalar_tensor_tensor(
            dst=y_t, data=x_t, op0=nl.multiply, operand0=rstd, op1=nl.multiply, operand1=w_t[0:nr, :]
        )
        nisa.dma_copy(dst=y[r : r + nr, :], src=y_t)
    return y
