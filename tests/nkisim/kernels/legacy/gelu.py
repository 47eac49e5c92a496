"""y = gelu(x) (beta-1 API) with the scalar-engine activation; tails masked."""

import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def gelu_kernel(x):
    M, N = x.shape
    F = 2048
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(F)[None, :]
    for m in nl.affine_range((M + 127) // 128):
        for n in nl.affine_range((N + F - 1) // F):
            inside = (m * 128 + i_p < M) & (n * F + i_f < N)
            x_t = nl.load(x[m * 128 + i_p, n * F + i_f], mask=inside)
            y_t = nisa.activation(op=nl.gelu, data=x_t, mask=inside, dtype=x.dtype)
            nl.store(out[m * 128 + i_p, n * F + i_f], value=y_t, mask=inside)
    return out
