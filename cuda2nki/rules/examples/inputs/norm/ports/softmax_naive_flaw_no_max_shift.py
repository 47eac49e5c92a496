"""Flawed port of softmax_naive: the row max is not subtracted before exp (the CUDA kernel's
first pass was dropped as "only for stability"). Exact on ordinary inputs; any row with an entry
above ~88 overflows exp in fp32 to inf and the row becomes NaN.

EXPECT: defect:nonfinite C2N4009 (large inputs; ordinary inputs pass)
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def softmax_naive(input):
    N, C = input.shape
    P = nl.tile_size.pmax
    output = nl.ndarray((N, C), dtype=input.dtype, buffer=nl.shared_hbm)
    for m in range(0, N, P):
        rows = min(P, N - m)
        x_t = nl.ndarray((rows, C), dtype=input.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=input[m : m + rows, :])
        e_t = nl.ndarray((rows, C), dtype=nl.float32, buffer=nl.sbuf)
        row_sum = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(
            dst=e_t,
            op=nl.exp,
            data=x_t,
            reduce_op=nl.add,
            reduce_res=row_sum,
            reduce_cmd=nisa.reduce_cmd.reset_reduce,
        )
        inv = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=inv, data=row_sum)
        y_t = nl.ndarray((rows, C), dtype=input.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=y_t, data=e_t, op0=nl.multiply, operand0=inv)
        nisa.dma_copy(dst=output[m : m + rows, :], src=y_t)
    return output
