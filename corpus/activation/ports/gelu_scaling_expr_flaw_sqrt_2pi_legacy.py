"""Flawed port of gelu_forward_rows in the legacy beta-1 API (neuronxcc.nki): masked 128-row
tiles, the tanh-GELU from nl operations, with the scaling factor taken as sqrt(2 pi) where the
CUDA kernel's GELU_SCALING_FACTOR is sqrtf(2.0f / M_PI) (2.5066 for 0.7979).

EXPECT: defect C2N4001 (root cause: changed constant)
"""

import math

import neuronxcc.nki.language as nl
from neuronxcc import nki

GELU_SCALE = math.sqrt(2.0 * math.pi)


@nki.jit
def gelu_forward_rows(inp):
    BT, C = inp.shape
    out = nl.ndarray((BT, C), dtype=inp.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(C)[None, :]
    for m in nl.affine_range((BT + 127) // 128):
        rows = m * 128 + i_p
        x = nl.load(inp[rows, i_f], mask=(rows < BT))
        cube = nl.multiply(nl.multiply(nl.multiply(x, x), x), 0.044715, mask=(rows < BT))
        t = nl.tanh(nl.multiply(nl.add(x, cube), GELU_SCALE), mask=(rows < BT))
        y = nl.multiply(nl.multiply(nl.add(t, 1.0), x), 0.5, mask=(rows < BT), dtype=inp.dtype)
        nl.store(out[rows, i_f], value=y, mask=(rows < BT))
    return out
