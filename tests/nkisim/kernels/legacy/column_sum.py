"""Column sums (beta-1 API): ones-vector matmul per 128-row tile, psum += over row tiles.
Full row tiles use the ones vector; the row remainder uses a smaller static tile."""

import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def column_sum_kernel(x):
    M, N = x.shape
    TN = nl.tile_size.gemm_moving_fmax
    full, rem = M // 128, M % 128
    out = nl.ndarray((1, N), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_r = nl.arange(max(rem, 1))[:, None]
    i_n = nl.arange(TN)[None, :]
    i_0 = nl.arange(1)[:, None]
    ones = nl.ones((128, 1), dtype=x.dtype)
    for n in nl.affine_range((N + TN - 1) // TN):
        cols = n * TN + i_n
        acc = nl.zeros((1, TN), dtype=nl.float32, buffer=nl.psum)
        for m in nl.affine_range(full):
            x_t = nl.load(x[m * 128 + i_p, cols], mask=(cols < N))
            acc += nl.matmul(ones, x_t, transpose_x=True)
        if rem > 0:
            x_r = nl.load(x[full * 128 + i_r, cols], mask=(cols < N))
            acc += nl.matmul(ones[i_r, 0], x_r, transpose_x=True)
        nl.store(out[i_0, cols], value=nl.copy(acc), mask=(cols < N))
    return out
