"""Row softmax: max (negated) as the exp bias, the exp's row sums from the activation reduce."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def softmax_kernel(x):
    M, N = x.shape
    P = nl.tile_size.pmax
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for m in range(0, M, P):
        rows = min(P, M - m)
        x_t = nl.ndarray((rows, N), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=x[m : m + rows, :])
        neg_max = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=neg_max, op=nl.maximum, data=x_t, axis=1, negate=True)
        e_t = nl.ndarray((rows, N), dtype=nl.float32, buffer=nl.sbuf)
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
        inv_sum = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=inv_sum, data=row_sum)
        y_t = nl.ndarray((rows, N), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=y_t, data=e_t, op0=nl.multiply, operand0=inv_sum)
        nisa.dma_copy(dst=out[m : m + rows, :], src=y_t)
    return out
