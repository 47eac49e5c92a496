"""Flawed port of softmax_naive in the legacy beta-1 API (neuronxcc.nki): the row tiles run in a
Python loop with masked loads and stores, and the ragged last tile takes its own branch -- which
multiplies the exponentials by the row sum instead of dividing by it.  Full tiles are right;
only the store of the tail tile's iteration is wrong, and the line to blame is that branch.

EXPECT: defect C2N4004 or C2N4001 (the ragged row tile; needs N % 128 != 0 and N > 128)
"""

import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def softmax_naive(input):
    N, C = input.shape
    output = nl.ndarray((N, C), dtype=input.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(C)[None, :]
    for m in range((N + 127) // 128):
        r = m * 128 + i_p
        x = nl.load(input[r, i_f], mask=(r < N))
        top = nl.max(x, axis=1, keepdims=True, mask=(r < N))
        e = nl.exp(nl.subtract(x, top, mask=(r < N)), mask=(r < N))
        s = nl.sum(e, axis=1, keepdims=True, mask=(r < N))
        if (m + 1) * 128 <= N:
            y = nl.divide(e, s, mask=(r < N))
        else:
            y = nl.multiply(e, s, mask=(r < N))
        nl.store(output[r, i_f], value=y, mask=(r < N))
    return output
