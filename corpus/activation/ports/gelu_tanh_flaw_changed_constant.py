"""Flawed port of gelu_forward: the tanh-GELU written out instruction by instruction, with the
cubic coefficient mistyped (0.04715 for 0.044715).  Every output is slightly off, by an amount
that grows smoothly with |x| -- no tile, tail or layout pattern.

EXPECT: defect C2N4001 (root cause: changed constant)
"""

import nki
import nki.isa as nisa
import nki.language as nl

SQRT_2_OVER_PI = 0.7978845608028654


@nki.jit
def gelu_forward(inp):
    (N,) = inp.shape
    P = nl.tile_size.pmax
    F = 512
    out = nl.ndarray((N,), dtype=inp.dtype, buffer=nl.shared_hbm)
    base = 0
    while base < N:
        rest = N - base
        rows, cols = (P, min(F, rest // P)) if rest >= P else (1, rest)
        cnt = rows * cols
        x = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x, src=inp[base : base + cnt].reshape((rows, cols)))
        x2 = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=x2, data1=x, data2=x, op=nl.multiply)
        x3 = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=x3, data1=x2, data2=x, op=nl.multiply)
        inner = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.scalar_tensor_tensor(
            dst=inner, data=x3, op0=nl.multiply, operand0=0.04715, op1=nl.add, operand1=x
        )
        t = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=t, op=nl.tanh, data=inner, scale=SQRT_2_OVER_PI)
        h = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.scalar_tensor_tensor(dst=h, data=t, op0=nl.add, operand0=1.0, op1=nl.multiply, operand1=x)
        y = nl.ndarray((rows, cols), dtype=inp.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=y, data=h, op0=nl.multiply, operand0=0.5)
        nisa.dma_copy(dst=out[base : base + cnt].reshape((rows, cols)), src=y)
        base += cnt
    return out
