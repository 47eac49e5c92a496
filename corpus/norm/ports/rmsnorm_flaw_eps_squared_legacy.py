"""Flawed port of rmsnorm_forward in the legacy beta-1 API (neuronxcc.nki): masked row tiles, the
sum of squares with nl.sum and rsqrt, with eps squared (mean(x^2) + eps * eps).  Ordinary rows
match; rows whose mean square is near eps or below it are scaled far too much.

EXPECT: defect C2N4001 (root cause: eps misplaced, on low-variance rows)
"""

import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def rmsnorm_forward(x, w, eps=1e-6):
    rows, C = x.shape
    y = nl.ndarray((rows, C), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(C)[None, :]
    w_t = nl.load(w[i_f]).broadcast_to((128, C))
    for m in nl.affine_range((rows + 127) // 128):
        r = m * 128 + i_p
        x_t = nl.load(x[r, i_f], mask=(r < rows))
        ss = nl.sum(nl.square(x_t, mask=(r < rows)), axis=[1], mask=(r < rows))
        rstd = nl.rsqrt(nl.add(nl.multiply(ss, 1.0 / C), eps * eps), mask=(r < rows))
        y_t = nl.multiply(nl.multiply(x_t, rstd), w_t, mask=(r < rows), dtype=x.dtype)
        nl.store(y[r, i_f], value=y_t, mask=(r < rows))
    return y
