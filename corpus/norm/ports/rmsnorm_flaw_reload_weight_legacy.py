"""Flawed port of rmsnorm_forward in the legacy beta-1 API (neuronxcc.nki): the weight row is
loaded and broadcast to the 128 partitions inside the row-tile loop, so every row tile moves the
same C weights from HBM again although nothing about them depends on the tile.

EXPECT: pass; C2N5006 (the weight load does not depend on the row loop)
"""

import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def rmsnorm_forward(x, w, eps=1e-6):
    rows, C = x.shape
    y = nl.ndarray((rows, C), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(C)[None, :]
    for m in nl.affine_range((rows + 127) // 128):
        r = m * 128 + i_p
        w_t = nl.load(w[i_f]).broadcast_to((128, C))
        x_t = nl.load(x[r, i_f], mask=(r < rows))
        ss = nl.sum(nl.square(x_t, mask=(r < rows)), axis=[1], mask=(r < rows))
        rstd = nl.rsqrt(nl.add(nl.multiply(ss, 1.0 / C), eps), mask=(r < rows))
        y_t = nl.multiply(nl.multiply(x_t, rstd), w_t, mask=(r < rows), dtype=x.dtype)
        nl.store(y[r, i_f], value=y_t, mask=(r < rows))
    return y
