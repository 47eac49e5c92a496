"""out = (x - mean) / sqrt(var + eps) * weight + bias per row of fp32 x [N, C], also storing the
row mean and rstd (the outputs of the corpus layer norm).

The techniques of the NKI layer-norm tutorial and performance guide: one DMA per 128-row tile;
mean and variance in one pass over the row by ``bn_stats`` on chunks of ``bn_stats_fmax``
columns and one ``bn_aggr``; the normalisation ``x * rstd - mean * rstd`` on the scalar engine
(an activation with a per-partition scale and bias) while the vector engine applies weight and
bias; weight and bias broadcast to all partitions once, outside the row loop.
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def layernorm_bn_kernel(inp, weight, bias, eps=1e-5):
    N, C = inp.shape
    P = nl.tile_size.pmax
    FS = nl.tile_size.bn_stats_fmax
    chunks = (C + FS - 1) // FS
    out = nl.ndarray((N, C), dtype=inp.dtype, buffer=nl.shared_hbm)
    mean = nl.ndarray((N,), dtype=nl.float32, buffer=nl.shared_hbm)
    rstd = nl.ndarray((N,), dtype=nl.float32, buffer=nl.shared_hbm)
    rows0 = min(P, N)
    w_t = nl.ndarray((rows0, C), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=w_t, src=weight.ap(pattern=[[0, rows0], [1, C]], offset=0))
    b_t = nl.ndarray((rows0, C), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=b_t, src=bias.ap(pattern=[[0, rows0], [1, C]], offset=0))
    for r0 in range(0, N, P):
        rows = min(P, N - r0)
        x_t = nl.ndarray((rows, C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=inp[r0 : r0 + rows, 0:C])
        stats = nl.ndarray((rows, chunks * 6), dtype=nl.float32, buffer=nl.sbuf)
        for c in range(chunks):
            c0 = c * FS
            nisa.bn_stats(
                dst=stats[0:rows, 6 * c : 6 * c + 6], data=x_t[0:rows, c0 : min(C, c0 + FS)]
            )
        mv = nl.ndarray((rows, 2), dtype=nl.float32, buffer=nl.sbuf)
        nisa.bn_aggr(dst=mv, data=stats)
        r = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(
            dst=r, data=mv[0:rows, 1:2], op0=nl.add, operand0=eps, op1=nl.rsqrt, operand1=None
        )
        nb = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(
            dst=nb,
            data=mv[0:rows, 0:1],
            op0=nl.multiply,
            operand0=r,
            op1=nl.multiply,
            operand1=-1.0,
        )
        nisa.dma_copy(dst=mean[r0 : r0 + rows].reshape((rows, 1)), src=mv[0:rows, 0:1])
        nisa.dma_copy(dst=rstd[r0 : r0 + rows].reshape((rows, 1)), src=r)
        y = nl.ndarray((rows, C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=y, op=nl.copy, data=x_t, scale=r, bias=nb)
        nisa.tensor_tensor(dst=y, data1=y, data2=w_t[0:rows, 0:C], op=nl.multiply)
        nisa.tensor_tensor(dst=y, data1=y, data2=b_t[0:rows, 0:C], op=nl.add)
        nisa.dma_copy(dst=out[r0 : r0 + rows, 0:C], src=y)
    return out, mean, rstd
