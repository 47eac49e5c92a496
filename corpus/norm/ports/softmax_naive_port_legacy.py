"""NKI port of softmax_naive in the legacy beta-1 API (neuronxcc.nki): rows on partitions with
affine indices, the row tail masked on load and store."""

import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def softmax_naive(input):
    N, C = input.shape
    output = nl.ndarray((N, C), dtype=input.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(C)[None, :]
    for m in nl.affine_range((N + 127) // 128):
        rows = m * 128 + i_p
        x_t = nl.load(input[rows, i_f], mask=(rows < N))
        neg_max = nisa.tensor_reduce(nl.maximum, x_t, axis=(1,), negate=True, mask=(rows < N))
        row_sum = nl.ndarray((128, 1), dtype=nl.float32)
        e_t = nisa.activation_reduce(
            op=nl.exp,
            data=x_t,
            reduce_op=nl.add,
            reduce_res=row_sum,
            bias=neg_max,
            mask=(rows < N),
            dtype=nl.float32,
        )
        inv = nisa.reciprocal(row_sum, mask=(rows < N))
        y_t = nisa.tensor_scalar(e_t, nl.multiply, inv, mask=(rows < N), dtype=input.dtype)
        nl.store(output[rows, i_f], value=y_t, mask=(rows < N))
    return output
