"""Flawed port of gelu_forward_rows: the CUDA kernel's GELU_SCALING_FACTOR, sqrtf(2.0f / M_PI),
is written without its square root (2.0 / math.pi, 0.6366 for 0.7979).  Every output is slightly
off, by an amount that grows with |x|: no tile, tail or layout pattern.

EXPECT: defect C2N4001 (root cause: changed constant, written as an expression on both sides)
"""

import math

import nki
import nki.isa as nisa
import nki.language as nl

SQRT_2_OVER_PI = 2.0 / math.pi


@nki.jit
def gelu_forward_rows(inp):
    BT, C = inp.shape
    P = nl.tile_size.pmax
    out = nl.ndarray((BT, C), dtype=inp.dtype, buffer=nl.shared_hbm)
    for r in range(0, BT, P):
        n = min(P, BT - r)
        x = nl.ndarray((P, C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x[0:n, :], src=inp[r : r + n, :])
        x2 = nl.ndarray((P, C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=x2[0:n, :], data1=x[0:n, :], data2=x[0:n, :], op=nl.multiply)
        # inner = x + 0.044715 x^3 = (0.044715 x^2 + 1) * x
        poly = nl.ndarray((P, C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(
            dst=poly[0:n, :],
            data=x2[0:n, :],
            op0=nl.multiply,
            operand0=0.044715,
            op1=nl.add,
            operand1=1.0,
        )
        inner = nl.ndarray((P, C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=inner[0:n, :], data1=poly[0:n, :], data2=x[0:n, :], op=nl.multiply)
        t = nl.ndarray((P, C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=t[0:n, :], op=nl.tanh, data=inner[0:n, :], scale=SQRT_2_OVER_PI)
        # y = (t + 1) * x * 0.5
        h = nl.ndarray((P, C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.scalar_tensor_tensor(
            dst=h[0:n, :],
            data=t[0:n, :],
            op0=nl.add,
            operand0=1.0,
            op1=nl.multiply,
            operand1=x[0:n, :],
        )
        y = nl.ndarray((P, C), dtype=inp.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=y[0:n, :], data=h[0:n, :], op0=nl.multiply, operand0=0.5)
        nisa.dma_copy(dst=out[r : r + n, :], src=y[0:n, :])
    return out
