"""Elementwise a + b (beta-1 API): affine index tiles, tails masked on load, add and store."""

import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def tensor_add_kernel(a, b):
    M, N = a.shape
    out = nl.ndarray((M, N), dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(512)[None, :]
    for m in nl.affine_range((M + 127) // 128):
        for n in nl.affine_range((N + 511) // 512):
            rows = m * 128 + i_p
            cols = n * 512 + i_f
            inside = (rows < M) & (cols < N)
            a_t = nl.load(a[rows, cols], mask=inside)
            b_t = nl.load(b[rows, cols], mask=inside)
            c_t = nl.add(a_t, b_t, mask=inside)
            nl.store(out[rows, cols], value=c_t, mask=inside)
    return out
