"""C (fp32) = A @ B for bf16 A (M, K), B (K, N) (beta-1 API): A tiles transposed on the tensor
engine, K-tiles accumulated with psum += nl.matmul; M/N tails masked."""

import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def matmul_bf16_kernel(a, b):
    M, K = a.shape
    K_, N = b.shape
    assert K == K_ and K % 128 == 0, "K must be a multiple of 128"
    TN = 512
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_k = nl.arange(128)[None, :]
    i_n = nl.arange(TN)[None, :]
    for m in nl.affine_range((M + 127) // 128):
        rows = m * 128 + i_p
        for n in nl.affine_range((N + TN - 1) // TN):
            cols = n * TN + i_n
            acc = nl.zeros((128, TN), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // 128):
                a_t = nl.load(a[rows, k * 128 + i_k], mask=(rows < M))
                a_tt = nl.copy(nisa.nc_transpose(a_t), dtype=a.dtype)
                b_t = nl.load(b[k * 128 + i_p, cols], mask=(cols < N))
                acc += nl.matmul(a_tt, b_t, transpose_x=True)
            nl.store(out[rows, cols], value=nl.copy(acc), mask=(rows < M) & (cols < N))
    return out
