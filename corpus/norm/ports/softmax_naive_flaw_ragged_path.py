"""Flawed port of softmax_naive: the ragged last row tile takes its own path, which scales the
exponentials by the row sum instead of its reciprocal. Full tiles are right; only the store of
the ragged tile's iteration is wrong, and the line to blame is that path's tensor_scalar.

EXPECT: defect C2N4004 or C2N4001 (the ragged row tile; needs N % 128 != 0 and N > 128)
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
        if rows == P:
            nisa.tensor_scalar(dst=y_t, data=e_t, op0=nl.multiply, operand0=inv)
        else:
            nisa.tensor_scalar(dst=y_t, data=e_t, op0=nl.multiply, operand0=row_sum)
        nisa.dma_copy(dst=output[m : m + rows, :], src=y_t)
    return output
