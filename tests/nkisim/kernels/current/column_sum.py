"""Column sums out[0, j] = sum_i x[i, j]: ones-vector matmul over 128-row tiles, accumulated in PSUM."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def column_sum_kernel(x):
    M, N = x.shape
    P = nl.tile_size.pmax
    TN = nl.tile_size.gemm_moving_fmax
    out = nl.ndarray((1, N), dtype=nl.float32, buffer=nl.shared_hbm)
    ones = nl.ndarray((P, 1), dtype=x.dtype, buffer=nl.sbuf)
    nisa.memset(dst=ones, value=1.0)
    for n in range(0, N, TN):
        cols = min(TN, N - n)
        acc = nl.ndarray((1, TN), dtype=nl.float32, buffer=nl.psum)
        for m in range(0, M, P):
            rows = min(P, M - m)
            x_t = nl.ndarray((P, TN), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=x_t[0:rows, 0:cols], src=x[m : m + rows, n : n + cols])
            nisa.nc_matmul(
                dst=acc[0:1, 0:cols],
                stationary=ones[0:rows, :],
                moving=x_t[0:rows, 0:cols],
                accumulate=m > 0,
            )
        res = nl.ndarray((1, TN), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=res[0:1, 0:cols], src=acc[0:1, 0:cols])
        nisa.dma_copy(dst=out[0:1, n : n + cols], src=res[0:1, 0:cols])
    return out
