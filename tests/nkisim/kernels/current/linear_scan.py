"""Linear recurrence along each row: h[:, t] = a[:, t] * h[:, t-1] + b[:, t], h[:, -1] = 0,
with tensor_tensor_scan over 512-column chunks chained through the previous chunk's last column."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def linear_scan_kernel(a, b):
    M, L = a.shape
    P = nl.tile_size.pmax
    F = 512
    out = nl.ndarray((M, L), dtype=a.dtype, buffer=nl.shared_hbm)
    for m in range(0, M, P):
        rows = min(P, M - m)
        a_t = nl.ndarray((rows, L), dtype=a.dtype, buffer=nl.sbuf)
        b_t = nl.ndarray((rows, L), dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a_t, src=a[m : m + rows, :])
        nisa.dma_copy(dst=b_t, src=b[m : m + rows, :])
        h_t = nl.ndarray((rows, L), dtype=nl.float32, buffer=nl.sbuf)
        for c in range(0, L, F):
            w = min(F, L - c)
            init = 0.0 if c == 0 else h_t[:, c - 1 : c]
            nisa.tensor_tensor_scan(
                dst=h_t[:, c : c + w],
                data0=a_t[:, c : c + w],
                data1=b_t[:, c : c + w],
                initial=init,
                op0=nl.multiply,
                op1=nl.add,
            )
        o_t = nl.ndarray((rows, L), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_copy(dst=o_t, src=h_t)
        nisa.dma_copy(dst=out[m : m + rows, :], src=o_t)
    return out
