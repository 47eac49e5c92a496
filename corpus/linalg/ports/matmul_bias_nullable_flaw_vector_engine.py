"""Flawed port of matmul_forward_bias: each output column is a dot product on the vector engine
(the row oc of weight broadcast to every partition, multiplied with the 128-row strip of inp and
summed along the free axis), the way the CUDA thread computes its one output.  The numbers are
right; the tensor engine stays idle and the strip takes OC dependent multiply-reduce pairs.

EXPECT: pass; C2N5002 (no tensor-engine instruction; the CUDA kernel tests bias != NULL)
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_forward_bias(inp, weight, bias):
    BT, C = inp.shape
    OC, _ = weight.shape
    P = nl.tile_size.pmax
    out = nl.ndarray((BT, OC), dtype=inp.dtype, buffer=nl.shared_hbm)
    b_t = nl.ndarray((P, OC), dtype=bias.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=b_t, src=bias.ap(pattern=[[0, P], [1, OC]], offset=0))
    for m in range(0, BT, P):
        mm = min(P, BT - m)
        x_t = nl.ndarray((P, C), dtype=inp.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t[0:mm, :], src=inp[m : m + mm, :])
        res = nl.ndarray((P, OC), dtype=nl.float32, buffer=nl.sbuf)
        for oc in range(OC):
            w_row = nl.ndarray((P, C), dtype=weight.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=w_row[0:mm, :], src=weight[oc : oc + 1, :].broadcast(0, mm))
            prod = nl.ndarray((P, C), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_tensor(
                dst=prod[0:mm, :],
                data1=x_t[0:mm, :],
                data2=w_row[0:mm, :],
                op=nl.multiply,
            )
            nisa.tensor_reduce(dst=res[0:mm, oc : oc + 1], op=nl.add, data=prod[0:mm, :], axis=1)
        y = nl.ndarray((P, OC), dtype=out.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=y[0:mm, :], data1=res[0:mm, :], data2=b_t[0:mm, :], op=nl.add)
        nisa.dma_copy(dst=out[m : m + mm, :], src=y[0:mm, :])
    return out
