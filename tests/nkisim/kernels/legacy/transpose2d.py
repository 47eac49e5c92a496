"""out = x.T (beta-1 API): 128 x 128 blocks through nc_transpose on the tensor engine."""

import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def transpose2d_kernel(x):
    M, N = x.shape
    out = nl.ndarray((N, M), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(128)[None, :]
    for m in nl.affine_range((M + 127) // 128):
        for n in nl.affine_range((N + 127) // 128):
            blk = nl.load(
                x[m * 128 + i_p, n * 128 + i_f], mask=(m * 128 + i_p < M) & (n * 128 + i_f < N)
            )
            blk_t = nisa.nc_transpose(blk)
            res = nl.copy(blk_t, dtype=x.dtype)
            nl.store(
                out[n * 128 + i_p, m * 128 + i_f],
                value=res,
                mask=(n * 128 + i_p < N) & (m * 128 + i_f < M),
            )
    return out
