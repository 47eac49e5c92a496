"""Flawed port of column_sum in the legacy beta-1 API (neuronxcc.nki): each 128-row tile is loaded
rows-on-partitions and summed with nl.sum(axis=1), along the free axis -- row sums instead of
column sums -- and stored at the row's index.  Entries past min(rows, cols) are never written.

EXPECT: defect C2N4001 or C2N4009 (row sums: wrong reduction axis)
"""

import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def column_sum(mat):
    rows, cols = mat.shape
    n = min(rows, cols)
    colsum = nl.ndarray((cols, 1), dtype=mat.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(cols)[None, :]
    i_0 = nl.arange(1)[None, :]
    for t in nl.affine_range((n + 127) // 128):
        r = t * 128 + i_p
        x_t = nl.load(mat[r, i_f], mask=(r < n))
        s_t = nl.sum(x_t, axis=1, keepdims=True, mask=(r < n))
        nl.store(colsum[r, i_0], value=s_t, mask=(r < n))
    return colsum.reshape((cols,))
