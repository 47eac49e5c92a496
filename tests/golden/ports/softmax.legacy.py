# C2N2505: partition axis of 'm' is 'i' (parallel axis)
# C2N2505: partition axis of 'e' is 'i' (parallel axis)
# C2N2505: partition axis of 's' is 'i' (parallel axis)
# C2N2505: partition axis of 'y' is 'i' (parallel axis)
# C2N2510: 'm' accumulates in fp32 (SBUF) as the CUDA kernel did
# C2N2510: 's' accumulates in fp32 (SBUF) as the CUDA kernel did
# C2N2507: a division is computed as a multiplication by a reciprocal
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def softmax(x):
    R = x.shape[0]
    C = x.shape[1]
    y = nl.ndarray((R, C), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(C)[None, :]
    i_f1 = nl.arange(1)[None, :]
    for t in nl.affine_range(0, (R + 127) // 128, 1):
        x_t = nl.load(x[128 * t + i_p, i_f], dtype=nl.float32, mask=(i_p < R - 128 * t))
        red = nisa.tensor_reduce(nl.maximum, x_t[i_p, i_f], axis=1, dtype=nl.float32, mask=(i_p < R - 128 * t))
        neg = nisa.tensor_scalar(red[i_p, i_f1], op0=nl.multiply, operand0=-1.0, reverse0=False, dtype=nl.float32, mask=(i_p < R - 128 * t))
        del red
        red1 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        exp = nisa.activation_reduce(op=nl.exp, data=x_t[i_p, i_f], reduce_op=nl.add, reduce_res=red1[i_p, i_f1], bias=neg[i_p, i_f1], scale=1.0, dtype=nl.float32, mask=(i_p < R - 128 * t))
        del neg, x_t
        recip = nisa.reciprocal(red1[i_p, i_f1], dtype=nl.float32, mask=(i_p < R - 128 * t))
        del red1
        mul = nisa.tensor_scalar(exp[i_p, i_f], op0=nl.multiply, operand0=recip[i_p, i_f1], reverse0=False, dtype=nl.float32, mask=(i_p < R - 128 * t))
        del exp, recip
        nl.store(y[128 * t + i_p, i_f], value=mul[i_p, i_f], mask=(i_p < R - 128 * t))
        del mul
    return y
