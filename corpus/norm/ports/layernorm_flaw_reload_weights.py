"""Flawed port of layernorm_forward: the weight and bias rows, the same for every row tile, are
broadcast-loaded inside the row-tile loop, once per 128 rows, instead of once before it.
Correct output; two extra [128, C] DMAs per row tile.  Among the many distinct row tiles the
kernel loads, the whole-kernel loads-per-region average stays low: only a per-line count shows it.

EXPECT: pass; C2N5006 (weight reloaded on every row tile)
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def layernorm_forward(inp, weight, bias):
    N, C = inp.shape
    P = nl.tile_size.pmax
    FS = nl.tile_size.bn_stats_fmax
    n_chunks = (C + FS - 1) // FS
    eps = 1e-5
    out = nl.ndarray((N, C), dtype=inp.dtype, buffer=nl.shared_hbm)
    mean = nl.ndarray((N,), dtype=inp.dtype, buffer=nl.shared_hbm)
    rstd = nl.ndarray((N,), dtype=inp.dtype, buffer=nl.shared_hbm)
    mean_2d = mean.reshape((N, 1))
    rstd_2d = rstd.reshape((N, 1))

    eps_t = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=eps_t, value=eps)

    for m in range(0, N, P):
        rows = min(P, N - m)
        w_t = nl.ndarray((P, C), dtype=weight.dtype, buffer=nl.sbuf)
        b_t = nl.ndarray((P, C), dtype=bias.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=w_t, src=weight.ap(pattern=[[0, P], [1, C]], offset=0))
        nisa.dma_copy(dst=b_t, src=bias.ap(pattern=[[0, P], [1, C]], offset=0))
        x_t = nl.ndarray((P, C), dtype=inp.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t[0:rows, :], src=inp[m : m + rows, :])
        stats = nl.ndarray((P, n_chunks, 6), dtype=nl.float32, buffer=nl.sbuf)
        for c in range(n_chunks):
            c0 = c * FS
            nisa.bn_stats(dst=stats[0:rows, c, :], data=x_t[0:rows, c0 : min(C, c0 + FS)])
        mv = nl.ndarray((P, 2), dtype=nl.float32, buffer=nl.sbuf)
        nisa.bn_aggr(dst=mv[0:rows, :], data=stats[0:rows, :, :])
        rs = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=rs[0:rows, :], op=nl.rsqrt, data=mv[0:rows, 1:2], bias=eps_t[0:rows, :])

        y_t = nl.ndarray((P, C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(
            dst=y_t[0:rows, :],
            data=x_t[0:rows, :],
            op0=nl.subtract,
            operand0=mv[0:rows, 0:1],
            op1=nl.multiply,
            operand1=rs[0:rows, :],
        )
        nisa.tensor_tensor(
            dst=y_t[0:rows, :], data1=y_t[0:rows, :], data2=w_t[0:rows, :], op=nl.multiply
        )
        o_t = nl.ndarray((P, C), dtype=inp.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(
            dst=o_t[0:rows, :], data1=y_t[0:rows, :], data2=b_t[0:rows, :], op=nl.add
        )
        nisa.dma_copy(dst=out[m : m + rows, :], src=o_t[0:rows, :])

        stat_out = nl.ndarray((P, 2), dtype=inp.dtype, buffer=nl.sbuf)
        nisa.tensor_copy(dst=stat_out[0:rows, 0:1], src=mv[0:rows, 0:1])
        nisa.tensor_copy(dst=stat_out[0:rows, 1:2], src=rs[0:rows, :])
        nisa.dma_copy(dst=mean_2d[m : m + rows, :], src=stat_out[0:rows, 0:1])
        nisa.dma_copy(dst=rstd_2d[m : m + rows, :], src=stat_out[0:rows, 1:2])
    return out, mean, rstd
