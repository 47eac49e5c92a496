"""NKI port of matmul_forward_bias: out = inp @ weight^T + bias on the tensor engine.

weight^T is built once in SBUF (C on partitions, transposed 128 x 128 blocks through PSUM); each
128-row strip of inp is transposed the same way.  C-tiles accumulate in one fp32 PSUM bank per
128 x 512 block of out; the bias, broadcast to every partition once, is added while evacuating
PSUM (after the sum, where the CUDA kernel starts its running sum from it).  The port takes a bias;
without one, call it with zeros."""

import nki
import nki.isa as nisa
import nki.language as nl


def _transposed(dst, src, rows, C, P, KT):
    """dst[c, kt, r] = src[r, kt * P + c] for the first ``rows`` rows of a (rows, C) HBM view."""
    for r in range(0, rows, P):
        nr = min(P, rows - r)
        for kt in range(KT):
            k = kt * P
            kk = min(P, C - k)
            blk = nl.ndarray((P, P), dtype=src.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=blk[0:nr, 0:kk], src=src[r : r + nr, k : k + kk])
            tp = nl.ndarray((P, P), dtype=src.dtype, buffer=nl.psum)
            nisa.nc_transpose(dst=tp[0:kk, 0:nr], data=blk[0:nr, 0:kk])
            nisa.tensor_copy(dst=dst[0:kk, kt, r : r + nr], src=tp[0:kk, 0:nr])


@nki.jit
def matmul_forward_bias(inp, weight, bias):
    BT, C = inp.shape
    OC, C_ = weight.shape
    assert C == C_, "inp and weight disagree on C"
    P = nl.tile_size.pmax
    TM = nl.tile_size.gemm_stationary_fmax
    TN = nl.tile_size.gemm_moving_fmax
    KT = (C + P - 1) // P
    out = nl.ndarray((BT, OC), dtype=inp.dtype, buffer=nl.shared_hbm)
    w_t = nl.ndarray((P, KT, OC), dtype=weight.dtype, buffer=nl.sbuf)
    _transposed(w_t, weight, OC, C, P, KT)
    b_t = nl.ndarray((TM, OC), dtype=bias.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=b_t, src=bias.ap(pattern=[[0, TM], [1, OC]], offset=0))
    for m in range(0, BT, TM):
        mm = min(TM, BT - m)
        a_t = nl.ndarray((P, KT, TM), dtype=inp.dtype, buffer=nl.sbuf)
        _transposed(a_t, inp[m : m + mm, :], mm, C, P, KT)
        for n in range(0, OC, TN):
            nn = min(TN, OC - n)
            acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for kt in range(KT):
                kk = min(P, C - kt * P)
                nisa.nc_matmul(
                    dst=acc[0:mm, 0:nn],
                    stationary=a_t[0:kk, kt, 0:mm],
                    moving=w_t[0:kk, kt, n : n + nn],
                    accumulate=kt > 0,
                )
            res = nl.ndarray((TM, TN), dtype=out.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(
                dst=res[0:mm, 0:nn], data1=acc[0:mm, 0:nn], data2=b_t[0:mm, n : n + nn], op=nl.add
            )
            nisa.dma_copy(dst=out[m : m + mm, n : n + nn], src=res[0:mm, 0:nn])
    return out
