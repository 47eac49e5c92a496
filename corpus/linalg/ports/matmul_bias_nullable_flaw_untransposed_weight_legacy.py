"""Flawed port of matmul_forward_bias in the legacy beta-1 API (neuronxcc.nki): weight is indexed
as (C, OC), the layout of a matmul's right operand, where the CUDA kernel stores it (OC, C) and
reads row oc for output column oc.  The moving operand's load puts weight's rows on the
partitions, so the port computes inp @ weight + bias: with OC == C every element is wrong;
otherwise the masks cut the load short and other elements are wrong.

EXPECT: defect C2N4005 or C2N4001 (the square-weight point: the port computes inp @ weight)
"""

import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def matmul_forward_bias(inp, weight, bias):
    BT, C = inp.shape
    OC, _ = weight.shape
    TN = 512
    out = nl.ndarray((BT, OC), dtype=inp.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_m = nl.arange(128)[None, :]
    i_n = nl.arange(TN)[None, :]
    i_r = nl.arange(128)[:, None]
    for m in nl.affine_range((BT + 127) // 128):
        for n in nl.affine_range((OC + TN - 1) // TN):
            acc = nl.zeros((128, TN), dtype=nl.float32, buffer=nl.psum)
            for kt in nl.affine_range((C + 127) // 128):
                k = kt * 128 + i_p
                a_t = nl.zeros((128, 128), dtype=inp.dtype)
                a_t[i_p, i_m] = nl.load(inp[m * 128 + i_m, k], mask=(k < C) & (m * 128 + i_m < BT))
                w_t = nl.zeros((128, TN), dtype=weight.dtype)
                w_t[i_p, i_n] = nl.load(weight[k, n * TN + i_n], mask=(k < C) & (n * TN + i_n < OC))
                acc += nl.matmul(a_t, w_t, transpose_x=True)
            b_t = nl.load(bias[n * TN + i_n], mask=(n * TN + i_n < OC))
            res = nl.add(acc, b_t, mask=(m * 128 + i_r < BT) & (n * TN + i_n < OC))
            nl.store(
                out[m * 128 + i_r, n * TN + i_n],
                value=res,
                mask=(m * 128 + i_r < BT) & (n * TN + i_n < OC),
            )
    return out
