"""out = x.T, 128 x 128 blocks transposed on the tensor engine through PSUM."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def transpose2d_kernel(x):
    M, N = x.shape
    P = nl.tile_size.pmax
    out = nl.ndarray((N, M), dtype=x.dtype, buffer=nl.shared_hbm)
    for m in range(0, M, P):
        rows = min(P, M - m)
        for n in range(0, N, P):
            cols = min(P, N - n)
            blk = nl.ndarray((P, P), dtype=x.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=blk[0:rows, 0:cols], src=x[m : m + rows, n : n + cols])
            blk_t = nl.ndarray((P, P), dtype=x.dtype, buffer=nl.psum)
            nisa.nc_transpose(dst=blk_t[0:cols, 0:rows], data=blk[0:rows, 0:cols])
            res = nl.ndarray((P, P), dtype=x.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res[0:cols, 0:rows], src=blk_t[0:cols, 0:rows])
            nisa.dma_copy(dst=out[n : n + cols, m : m + rows], src=res[0:cols, 0:rows])
    return out
