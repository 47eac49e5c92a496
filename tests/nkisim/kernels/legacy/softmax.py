"""Row softmax (beta-1 API) with nl reductions; the row tail is masked."""

import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def softmax_kernel(x):
    M, N = x.shape
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(N)[None, :]
    for m in nl.affine_range((M + 127) // 128):
        rows = m * 128 + i_p
        x_t = nl.load(x[rows, i_f], mask=(rows < M))
        row_max = nl.max(x_t, axis=[1])
        e_t = nl.exp(nl.subtract(x_t, row_max), mask=(rows < M))
        row_sum = nl.sum(e_t, axis=[1], dtype=nl.float32)
        y_t = nl.multiply(e_t, nl.reciprocal(row_sum), dtype=x.dtype)
        nl.store(out[rows, i_f], value=y_t, mask=(rows < M))
    return out
