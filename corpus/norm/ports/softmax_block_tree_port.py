"""NKI port of softmax_block_tree as `cuda2nki port` drafts it: rows on partitions, the whole row
in one SBUF tile; the block's two shared-memory trees become a row max (tensor_reduce) and the
exp's row sum (the activation's reduce), the division a multiplication by the reciprocal."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def softmax_block_tree(x):
    N = x.shape[0]
    C = x.shape[1]
    y = nl.ndarray((N, C), dtype=nl.float32, buffer=nl.shared_hbm)
    # from softmax_block_tree.cu:30
    # C2N2505: partition axis of 'y' is 'i' (parallel axis)
    # C2N2510: 'y' accumulates in fp32 (SBUF) as the CUDA kernel did
    for t in range((N + 127) // 128):
        t_n = min(128, N - 128 * t)
        x_t = nl.ndarray((t_n, C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=x[128 * t:128 * t + t_n, 0:C])
        red = nl.ndarray((t_n, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=red, op=nl.maximum, data=x_t, axis=1)
        max1 = nl.ndarray((t_n, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=max1, data=red, op0=nl.maximum, operand0=float("-inf"), reverse0=True)
        neg = nl.ndarray((t_n, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=neg, data=max1, op0=nl.multiply, operand0=-1.0, reverse0=False)
        exp = nl.ndarray((t_n, C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=exp, op=nl.exp, data=x_t, bias=neg, scale=1.0)
        neg1 = nl.ndarray((t_n, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=neg1, data=max1, op0=nl.multiply, operand0=-1.0, reverse0=False)
        exp1 = nl.ndarray((t_n, C), dtype=nl.float32, buffer=nl.sbuf)
        red1 = nl.ndarray((t_n, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=exp1, op=nl.exp, data=x_t, bias=neg1, scale=1.0, reduce_op=nl.add, reduce_res=red1, reduce_cmd=nisa.reduce_cmd.reset_reduce)
        recip = nl.ndarray((t_n, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=recip, data=red1)
        mul = nl.ndarray((t_n, C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=mul, data=exp, op0=nl.multiply, operand0=recip, reverse0=False)
        nisa.dma_copy(dst=y[128 * t:128 * t + t_n, 0:C], src=mul)
    return y
