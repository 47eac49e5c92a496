"""RMS norm (beta-1 API): masked row tail, sum of squares, rsqrt, gamma broadcast across rows."""

import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def rmsnorm_kernel(x, g, eps=1e-6):
    M, N = x.shape
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(N)[None, :]
    g_t = nl.load(g[i_f])
    for m in nl.affine_range((M + 127) // 128):
        rows = m * 128 + i_p
        x_t = nl.load(x[rows, i_f], mask=(rows < M))
        sq = nl.square(x_t, mask=(rows < M))
        ss = nl.sum(sq, axis=[1], mask=(rows < M))
        rstd = nl.rsqrt(ss / N + eps, mask=(rows < M))
        y_t = nl.multiply(x_t, rstd, mask=(rows < M))
        g_b = g_t.broadcast_to((128, N))
        y_t = nl.multiply(y_t, g_b, mask=(rows < M), dtype=x.dtype)
        nl.store(out[rows, i_f], value=y_t, mask=(rows < M))
    return out
