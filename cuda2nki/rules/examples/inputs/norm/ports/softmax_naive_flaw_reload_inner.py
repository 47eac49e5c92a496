"""Flawed port of softmax_naive: the three CUDA passes (max, sum of exp, normalise) are kept as
three separate passes, each reloading the same rows from HBM and recomputing exp. Correct
output, three times the input DMA traffic and twice the exp work.

EXPECT: pass; C2N5006 (each input row tile loaded 3 times)
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
        # pass 1: row max
        x1 = nl.ndarray((rows, C), dtype=input.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x1, src=input[m : m + rows, :])
        neg_max = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=neg_max, op=nl.maximum, data=x1, axis=1, negate=True)
        # pass 2: sum of exp
        x2 = nl.ndarray((rows, C), dtype=input.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x2, src=input[m : m + rows, :])
        e2 = nl.ndarray((rows, C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=e2, op=nl.exp, data=x2, bias=neg_max)
        row_sum = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=row_sum, op=nl.add, data=e2, axis=1)
        inv = nl.ndarray((rows, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=inv, data=row_sum)
        # pass 3: normalise
        x3 = nl.ndarray((rows, C), dtype=input.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x3, src=input[m : m + rows, :])
        e3 = nl.ndarray((rows, C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=e3, op=nl.exp, data=x3, bias=neg_max)
        y_t = nl.ndarray((rows, C), dtype=input.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=y_t, data=e3, op0=nl.multiply, operand0=inv)
        nisa.dma_copy(dst=output[m : m + rows, :], src=y_t)
    return output
