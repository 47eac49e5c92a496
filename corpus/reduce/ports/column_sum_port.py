"""NKI port of column_sum: the sum over rows crosses partitions, so it is a matmul with a ones
vector (ones[rows, 1].T @ mat[rows, cols]) accumulated over 128-row tiles in PSUM."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def column_sum(mat):
    rows, cols = mat.shape
    P = nl.tile_size.pmax
    TN = nl.tile_size.gemm_moving_fmax
    colsum = nl.ndarray((cols,), dtype=mat.dtype, buffer=nl.shared_hbm)
    colsum_2d = colsum.reshape((1, cols))
    ones = nl.ndarray((P, 1), dtype=mat.dtype, buffer=nl.sbuf)
    nisa.memset(dst=ones, value=1.0)
    for n in range(0, cols, TN):
        nn = min(TN, cols - n)
        acc = nl.ndarray((1, TN), dtype=nl.float32, buffer=nl.psum)
        for r in range(0, rows, P):
            nr = min(P, rows - r)
            x_t = nl.ndarray((P, TN), dtype=mat.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=x_t[0:nr, 0:nn], src=mat[r : r + nr, n : n + nn])
            nisa.nc_matmul(
                dst=acc[0:1, 0:nn], stationary=ones[0:nr, :], moving=x_t[0:nr, 0:nn], accumulate=r > 0
            )
        res = nl.ndarray((1, TN), dtype=mat.dtype, buffer=nl.sbuf)
        nisa.tensor_copy(dst=res[0:1, 0:nn], src=acc[0:1, 0:nn])
        nisa.dma_copy(dst=colsum_2d[0:1, n : n + nn], src=res[0:1, 0:nn])
    return colsum
