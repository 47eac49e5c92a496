"""Linear recurrence h[:, t] = a[:, t] * h[:, t-1] + b[:, t] (beta-1 API): tensor_tensor_scan
per 512-column chunk, the carry passed as the initial value; row tail masked."""

import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def linear_scan_kernel(a, b):
    M, L = a.shape
    F = 512
    assert L % F == 0 or L < F, "sequence is chunked by 512"
    W = min(F, L)
    out = nl.ndarray((M, L), dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(W)[None, :]
    for m in nl.affine_range((M + 127) // 128):
        rows = m * 128 + i_p
        carry = nl.zeros((128, 1), dtype=nl.float32)
        for c in nl.sequential_range(L // W):
            a_t = nl.load(a[rows, c * W + i_f], mask=(rows < M))
            b_t = nl.load(b[rows, c * W + i_f], mask=(rows < M))
            h_t = nisa.tensor_tensor_scan(
                a_t, b_t, initial=carry, op0=nl.multiply, op1=nl.add, dtype=nl.float32
            )
            carry[i_p, 0] = nl.copy(h_t[i_p, W - 1])
            nl.store(out[rows, c * W + i_f], value=h_t, mask=(rows < M))
    return out
