"""Flawed port of gelu_forward: the vector is cut into [1, 2048] tiles, one partition wide.
Every instruction is wide, so it looks efficient per instruction, but the engines run on 1 of
their 128 lanes: 128 times the instructions a [128, F] layout needs.

EXPECT: pass; C2N5008 (1 of 128 partitions, wide tiles)
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def gelu_forward(inp):
    (N,) = inp.shape
    F = 2048
    out = nl.ndarray((N,), dtype=inp.dtype, buffer=nl.shared_hbm)
    base = 0
    while base < N:
        rest = N - base
        rows, cols = 1, min(F, rest)
        cnt = rows * cols
        x_t = nl.ndarray((rows, cols), dtype=inp.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=inp[base : base + cnt].reshape((rows, cols)))
        y_t = nl.ndarray((rows, cols), dtype=inp.dtype, buffer=nl.sbuf)
        nisa.activation(dst=y_t, op=nl.gelu_apprx_tanh, data=x_t)
        nisa.dma_copy(dst=out[base : base + cnt].reshape((rows, cols)), src=y_t)
        base += cnt
    return out
