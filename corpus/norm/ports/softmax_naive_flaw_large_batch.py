"""Flawed port of softmax_naive: from 512 rows on, a "large batch" path scales the exponentials
with a divide by the reciprocal of the row sum (so by the row sum itself) instead of a multiply.
Below 512 rows the port is right, and none of the binding's shapes reaches 512 rows: only a test
point the checker derives from the port's own `if N >= 512` finds it.

EXPECT: defect C2N4001 or C2N4004 (needs N >= 512)
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
        neg_max = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=neg_max, op=nl.maximum, data=x_t, axis=1, negate=True)
        e_t = nl.ndarray((rows, C), dtype=nl.float32, buffer=nl.sbuf)
        row_sum = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(
            dst=e_t,
            op=nl.exp,
            data=x_t,
            bias=neg_max,
            reduce_op=nl.add,
            reduce_res=row_sum,
            reduce_cmd=nisa.reduce_cmd.reset_reduce,
        )
        inv = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=inv, data=row_sum)
        y_t = nl.ndarray((rows, C), dtype=input.dtype, buffer=nl.sbuf)
        if N >= 512:
            nisa.tensor_scalar(dst=y_t, data=e_t, op0=nl.divide, operand0=inv)
        else:
            nisa.tensor_scalar(dst=y_t, data=e_t, op0=nl.multiply, operand0=inv)
        nisa.dma_copy(dst=output[m : m + rows, :], src=y_t)
    return output
