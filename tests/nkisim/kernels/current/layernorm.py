"""Layer norm over the last axis with bn_stats / bn_aggr (512-column stat chunks)."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def layernorm_kernel(x, gamma, beta, eps=1e-5):
    M, N = x.shape
    P = nl.tile_size.pmax
    FS = nl.tile_size.bn_stats_fmax
    n_chunks = (N + FS - 1) // FS
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)

    # gamma / beta broadcast to every partition once (stride-0 partition access pattern)
    g_t = nl.ndarray((P, N), dtype=gamma.dtype, buffer=nl.sbuf)
    b_t = nl.ndarray((P, N), dtype=beta.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=g_t, src=gamma.ap(pattern=[[0, P], [1, N]], offset=0))
    nisa.dma_copy(dst=b_t, src=beta.ap(pattern=[[0, P], [1, N]], offset=0))
    eps_t = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=eps_t, value=eps)

    for m in range(0, M, P):
        rows = min(P, M - m)
        x_t = nl.ndarray((P, N), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t[0:rows, :], src=x[m : m + rows, :])

        stats = nl.ndarray((P, n_chunks, 6), dtype=nl.float32, buffer=nl.sbuf)
        for c in range(n_chunks):
            c0 = c * FS
            c1 = min(N, c0 + FS)
            nisa.bn_stats(dst=stats[0:rows, c, :], data=x_t[0:rows, c0:c1])
        mv = nl.ndarray((P, 2), dtype=nl.float32, buffer=nl.sbuf)
        nisa.bn_aggr(dst=mv[0:rows, :], data=stats[0:rows, :, :])

        rstd = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(
            dst=rstd[0:rows, :], op=nl.rsqrt, data=mv[0:rows, 1:2], bias=eps_t[0:rows, :]
        )

        y_t = nl.ndarray((P, N), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(
            dst=y_t[0:rows, :],
            data=x_t[0:rows, :],
            op0=nl.subtract,
            operand0=mv[0:rows, 0:1],
            op1=nl.multiply,
            operand1=rstd[0:rows, :],
        )
        nisa.tensor_tensor(
            dst=y_t[0:rows, :], data1=y_t[0:rows, :], data2=g_t[0:rows, :], op=nl.multiply
        )
        o_t = nl.ndarray((P, N), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(
            dst=o_t[0:rows, :], data1=y_t[0:rows, :], data2=b_t[0:rows, :], op=nl.add
        )
        nisa.dma_copy(dst=out[m : m + rows, :], src=o_t[0:rows, :])
    return out
