"""SwiGLU-style gate (beta-1 API): out = silu(gate) * up, tails masked."""

import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def silu_mul_kernel(gate, up):
    M, N = gate.shape
    F = 1024
    out = nl.ndarray((M, N), dtype=gate.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(F)[None, :]
    for m in nl.affine_range((M + 127) // 128):
        for n in nl.affine_range((N + F - 1) // F):
            rows = m * 128 + i_p
            cols = n * F + i_f
            inside = (rows < M) & (cols < N)
            g_t = nl.load(gate[rows, cols], mask=inside)
            u_t = nl.load(up[rows, cols], mask=inside)
            s_t = nl.silu(g_t, mask=inside, dtype=nl.float32)
            o_t = nl.multiply(s_t, u_t, mask=inside, dtype=gate.dtype)
            nl.store(out[rows, cols], value=o_t, mask=inside)
    return out
