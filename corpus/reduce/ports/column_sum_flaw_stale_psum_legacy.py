"""Flawed port of column_sum in the legacy beta-1 API (neuronxcc.nki): column sums as a ones-vector
matmul per 128-row tile, accumulated in PSUM over the row tiles, 512 columns at a time.  The PSUM
accumulator is zeroed once, before the column loop, so every column block after the first also
holds the sums of the block before it.

EXPECT: defect:tiles C2N4008 or C2N4001 (column blocks after the first; needs cols > 512)
"""

import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def column_sum(mat):
    rows, cols = mat.shape
    TN = nl.tile_size.gemm_moving_fmax
    full, rem = rows // 128, rows % 128
    colsum = nl.ndarray((cols,), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_r = nl.arange(max(rem, 1))[:, None]
    i_n = nl.arange(TN)[None, :]
    ones = nl.ones((128, 1), dtype=mat.dtype)
    acc = nl.zeros((1, TN), dtype=nl.float32, buffer=nl.psum)
    for n in nl.affine_range((cols + TN - 1) // TN):
        c = n * TN + i_n
        for m in nl.affine_range(full):
            x_t = nl.load(mat[m * 128 + i_p, c], mask=(c < cols))
            acc += nl.matmul(ones, x_t, transpose_x=True)
        if rem > 0:
            x_r = nl.load(mat[full * 128 + i_r, c], mask=(c < cols))
            acc += nl.matmul(ones[i_r, 0], x_r, transpose_x=True)
        nl.store(colsum[c], value=nl.copy(acc), mask=(c < cols))
    return colsum
