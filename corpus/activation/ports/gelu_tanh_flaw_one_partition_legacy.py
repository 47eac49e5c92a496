"""Flawed port of gelu_forward in the legacy beta-1 API (neuronxcc.nki): the vector is walked in
[1, 2048] tiles, one partition wide, with a masked tail.  Each instruction is wide, so it looks
efficient per instruction, but the engines use 1 of their 128 lanes.

EXPECT: pass; C2N5008 (1 of 128 partitions, wide tiles)
"""

import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def gelu_forward(inp):
    (N,) = inp.shape
    F = 2048
    out = nl.ndarray((N,), dtype=inp.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(F)[None, :]
    for t in nl.affine_range((N + F - 1) // F):
        j = t * F + i_f
        x_t = nl.load(inp[j], mask=(j < N))
        y_t = nl.gelu_apprx_tanh(x_t, mask=(j < N))
        nl.store(out[j], value=y_t, mask=(j < N))
    return out
