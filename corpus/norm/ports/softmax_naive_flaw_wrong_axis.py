"""Flawed port of softmax_naive: the access patterns take the input column-major (strides swapped),
so each tile holds columns on the partitions and the max, the exponentials' sum and the
normalisation run down the columns: a softmax over axis 0 instead of over each row. The
exponentials are kept in bf16, so a reviewer could blame precision; the error is far larger than
bf16's and the re-run on the transposed input explains all of it.

EXPECT: defect:wrong_axis C2N4001
"""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def softmax_naive(input):
    N, C = input.shape
    P = nl.tile_size.pmax
    output = nl.ndarray((N, C), dtype=input.dtype, buffer=nl.shared_hbm)
    for c in range(0, C, P):
        cols = min(P, C - c)
        x_t = nl.ndarray((cols, N), dtype=input.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=input.ap(pattern=[[1, cols], [C, N]], offset=c))
        neg_max = nl.ndarray((cols, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=neg_max, op=nl.maximum, data=x_t, axis=1, negate=True)
        e_t = nl.ndarray((cols, N), dtype=nl.bfloat16, buffer=nl.sbuf)
        total = nl.ndarray((cols, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(
            dst=e_t,
            op=nl.exp,
            data=x_t,
            bias=neg_max,
            reduce_op=nl.add,
            reduce_res=total,
            reduce_cmd=nisa.reduce_cmd.reset_reduce,
        )
        inv = nl.ndarray((cols, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=inv, data=total)
        y_t = nl.ndarray((cols, N), dtype=input.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=y_t, data=e_t, op0=nl.multiply, operand0=inv)
        nisa.dma_copy(dst=output.ap(pattern=[[1, cols], [C, N]], offset=c), src=y_t)
    return output
