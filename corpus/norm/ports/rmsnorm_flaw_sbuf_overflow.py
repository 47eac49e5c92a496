"""Flawed port of rmsnorm_forward: staging buffers are sized for the largest supported hidden
size (MAX_C = 32768 fp32 columns) instead of the actual C; the input tile plus the squared tile
need 2 x 128 KiB per partition, more than the usable SBUF of any target.

EXPECT: violation C2N3017 (SBUF capacity); C2N5012
"""

import nki
import nki.isa as nisa
import nki.language as nl

MAX_C = 32768


@nki.jit
def rmsnorm_forward(x, w, eps=1e-6):
    rows, C = x.shape
    assert C <= MAX_C
    P = nl.tile_size.pmax
    y = nl.ndarray((rows, C), dtype=x.dtype, buffer=nl.shared_hbm)
    eps_t = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=eps_t, value=float(eps))
    w_t = nl.ndarray((P, C), dtype=w.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=w_t, src=w.reshape((1, C)).broadcast(0, P))
    x_buf = nl.ndarray((P, MAX_C), dtype=nl.float32, buffer=nl.sbuf)
    sq_buf = nl.ndarray((P, MAX_C), dtype=nl.float32, buffer=nl.sbuf)
    for r in range(0, rows, P):
        nr = min(P, rows - r)
        x_t = x_buf[0:nr, 0:C]
        nisa.dma_copy(dst=x_t, src=x[r : r + nr, :])
        ss = nl.ndarray((nr, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(
            dst=sq_buf[0:nr, 0:C],
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
            dst=y_t,
            data=x_t,
            op0=nl.multiply,
            operand0=rstd,
            op1=nl.multiply,
            operand1=w_t[0:nr, :],
        )
        nisa.dma_copy(dst=y[r : r + nr, :], src=y_t)
    return y
