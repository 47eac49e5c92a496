"""Flawed port of softmax_naive: the row-tile loop covers N // 128 full tiles and has no remainder
tile, as if N were always a multiple of 128; the last N % 128 rows are never written.

EXPECT: defect:unwritten C2N4003 (rows past the last full tile); C2N5003
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def softmax_naive(input):
    N, C = input.shape
    P = nl.tile_size.pmax
    output = nl.ndarray((N, C), dtype=input.dtype, buffer=nl.shared_hbm)
    for t in range(N // P):
        m = t * P
        x_t = nl.ndarray((P, C), dtype=input.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=input[m : m + P, :])
        neg_max = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=neg_max, op=nl.maximum, data=x_t, axis=1, negate=True)
        e_t = nl.ndarray((P, C), dtype=nl.float32, buffer=nl.sbuf)
        row_sum = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(
            dst=e_t,
            op=nl.exp,
            data=x_t,
            bias=neg_max,
            reduce_op=nl.add,
            reduce_res=row_sum,
            reduce_cmd=nisa.reduce_cmd.reset_reduce,
        )
        inv = nl.ndarray((P, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=inv, data=row_sum)
        y_t = nl.ndarray((P, C), dtype=input.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=y_t, data=e_t, op0=nl.multiply, operand0=inv)
        nisa.dma_copy(dst=output[m : m + P, :], src=y_t)
    return output
