# C2N2505: partition axis of 'm' is 'i' (parallel axis)
# C2N2505: partition axis of 'e' is 'i' (parallel axis)
# C2N2505: partition axis of 's' is 'i' (parallel axis)
# C2N2505: partition axis of 'y' is 'i' (parallel axis)
# C2N2510: 'm' accumulates in fp32 (SBUF) as the CUDA kernel did
# C2N2510: 's' accumulates in fp32 (SBUF) as the CUDA kernel did
# C2N2507: division at this line is computed as multiplication by a reciprocal
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def softmax(x):
    R = x.shape[0]
    C = x.shape[1]
    y = nl.ndarray((R, C), dtype=nl.float32, buffer=nl.shared_hbm)
    for t in nl.affine_range(0, (R + 128 - 1) // 128, 1):
        x_t = nl.ndarray((min(128, R - 128 * t), C), dtype=nl.float32, buffer=nl.sbuf)
        x_t[...] = nl.load(x[128 * t:128 * t + min(128, R - 128 * t), 0:C])
        red = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        red[...] = nisa.tensor_reduce(nl.maximum, x_t, axis=1)
        neg = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        neg[...] = nisa.tensor_scalar(red, op0=nl.multiply, operand0=-1.0, reverse0=False)
        exp = nl.ndarray((min(128, R - 128 * t), C), dtype=nl.float32, buffer=nl.sbuf)
        red1 = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        exp[...] = nisa.activation_reduce(op=nl.exp, data=x_t, reduce_op=nl.add, reduce_res=red1, bias=neg, scale=1.0)
        recip = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        recip[...] = nisa.reciprocal(red1)
        mul = nl.ndarray((min(128, R - 128 * t), C), dtype=nl.float32, buffer=nl.sbuf)
        mul[...] = nisa.tensor_scalar(exp, op0=nl.multiply, operand0=recip, reverse0=False)
        nl.store(y[128 * t:128 * t + min(128, R - 128 * t), 0:C], value=mul)
    return y
