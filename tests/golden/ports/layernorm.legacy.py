# C2N2505: partition axis of 'mean' is 'i' (parallel axis)
# C2N2505: partition axis of 'rstd' is 'i' (parallel axis)
# C2N2505: partition axis of 'y' is 'i' (parallel axis)
# C2N2510: 'mean' accumulates in fp32 (SBUF) as the CUDA kernel did
# C2N2510: 'rstd' accumulates in fp32 (SBUF) as the CUDA kernel did
# C2N2507: division at this line is computed as multiplication by a reciprocal
# C2N2507: division at this line is computed as multiplication by a reciprocal
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def layernorm(x, gamma, beta, eps):
    R = x.shape[0]
    C = x.shape[1]
    y = nl.ndarray((R, C), dtype=nl.float32, buffer=nl.shared_hbm)
    gamma_t = nl.ndarray((min(128, R), C), dtype=nl.float32, buffer=nl.sbuf)
    gamma_t[...] = nl.load(gamma.ap(pattern=[[0, min(128, R)], [1, C]], offset=0))
    beta_t = nl.ndarray((min(128, R), C), dtype=nl.float32, buffer=nl.sbuf)
    beta_t[...] = nl.load(beta.ap(pattern=[[0, min(128, R)], [1, C]], offset=0))
    for t in nl.affine_range(0, (R + 128 - 1) // 128, 1):
        x_t = nl.ndarray((min(128, R - 128 * t), C), dtype=nl.float32, buffer=nl.sbuf)
        x_t[...] = nl.load(x[128 * t:128 * t + min(128, R - 128 * t), 0:C])
        red = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        red[...] = nisa.tensor_reduce(nl.add, x_t, axis=1)
        div = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        div[...] = nisa.tensor_scalar(red, op0=nl.multiply, operand0=1.0 / C, reverse0=False)
        neg = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        neg[...] = nisa.tensor_scalar(div, op0=nl.multiply, operand0=-1.0, reverse0=False)
        square = nl.ndarray((min(128, R - 128 * t), C), dtype=nl.float32, buffer=nl.sbuf)
        red1 = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        square[...] = nisa.activation_reduce(op=nl.square, data=x_t, reduce_op=nl.add, reduce_res=red1, bias=neg, scale=1.0)
        div1 = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        div1[...] = nisa.tensor_scalar(red1, op0=nl.multiply, operand0=1.0 / C, reverse0=False)
        add = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        add[...] = nisa.tensor_scalar(div1, op0=nl.add, operand0=eps, reverse0=False)
        rsqrt = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        rsqrt[...] = nisa.activation(op=nl.rsqrt, data=add, bias=None, scale=1.0)
        mul = nl.ndarray((min(128, R - 128 * t), C), dtype=nl.float32, buffer=nl.sbuf)
        mul[...] = nisa.tensor_scalar(x_t, op0=nl.subtract, operand0=div, op1=nl.multiply, operand1=rsqrt)
        mul1 = nl.ndarray((min(128, R - 128 * t), C), dtype=nl.float32, buffer=nl.sbuf)
        mul1[...] = nisa.tensor_tensor(mul, gamma_t[0:min(128, R - 128 * t), 0:C], op=nl.multiply)
        add1 = nl.ndarray((min(128, R - 128 * t), C), dtype=nl.float32, buffer=nl.sbuf)
        add1[...] = nisa.tensor_tensor(mul1, beta_t[0:min(128, R - 128 * t), 0:C], op=nl.add)
        nl.store(y[128 * t:128 * t + min(128, R - 128 * t), 0:C], value=add1)
    return y
