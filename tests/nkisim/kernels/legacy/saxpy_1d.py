"""out = alpha * x + y over 1-D vectors (beta-1 API): the vector is viewed as 128 x F tiles
through an affine index; the last tile is masked."""

import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def saxpy_kernel(x, y, alpha=2.0):
    (n,) = x.shape
    F = 2048
    out = nl.ndarray((n,), dtype=y.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(F)[None, :]
    for t in nl.affine_range((n + 128 * F - 1) // (128 * F)):
        idx = t * 128 * F + i_p * F + i_f
        x_t = nl.load(x[idx], mask=(idx < n))
        y_t = nl.load(y[idx], mask=(idx < n))
        r_t = nl.add(nl.multiply(x_t, alpha, dtype=y.dtype), y_t, mask=(idx < n))
        nl.store(out[idx], value=r_t, mask=(idx < n))
    return out
