"""Flawed port of gelu_forward: a Python loop over element indices, one 1 x 1 tile per CUDA
thread -- a DMA in, one activation and a DMA out per element.

EXPECT: pass; C2N5010 C2N5007 C2N5001 (per-element loop, 4-byte DMAs)
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def gelu_forward(inp):
    (N,) = inp.shape
    out = nl.ndarray((N,), dtype=inp.dtype, buffer=nl.shared_hbm)
    inp_2d = inp.reshape((1, N))
    out_2d = out.reshape((1, N))
    for i in range(N):
        x_t = nl.ndarray((1, 1), dtype=inp.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=inp_2d[0:1, i : i + 1])
        y_t = nl.ndarray((1, 1), dtype=inp.dtype, buffer=nl.sbuf)
        nisa.activation(dst=y_t, op=nl.gelu_apprx_tanh, data=x_t)
        nisa.dma_copy(dst=out_2d[0:1, i : i + 1], src=y_t)
    return out
