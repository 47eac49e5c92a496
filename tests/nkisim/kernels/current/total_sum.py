"""Sum of all elements: row sums on the vector engine, then a cross-partition sum as a matmul
with a ones vector, accumulated over row tiles in PSUM."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def total_sum_kernel(x):
    M, N = x.shape
    P = nl.tile_size.pmax
    out = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    ones = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=ones, value=1.0)
    acc = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.psum)
    for m in range(0, M, P):
        rows = min(P, M - m)
        x_t = nl.ndarray((rows, N), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=x[m : m + rows, :])
        row_sum = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=row_sum, op=nl.add, data=x_t, axis=1)
        nisa.nc_matmul(dst=acc, stationary=row_sum, moving=ones[0:rows, :], accumulate=m > 0)
    res = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
    return out
