# C2N2505: partition axis of 'mean' is 'i' (parallel axis)
# C2N2505: partition axis of 'rstd' is 'i' (parallel axis)
# C2N2505: partition axis of 'y' is 'i' (parallel axis)
# C2N2510: 'mean' accumulates in fp32 (SBUF) as the CUDA kernel did
# C2N2510: 'rstd' accumulates in fp32 (SBUF) as the CUDA kernel did
# C2N2507: a division is computed as a multiplication by a reciprocal
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def layernorm(x, gamma, beta, eps):
    R = x.shape[0]
    C = x.shape[1]
    y = nl.ndarray((R, C), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(C)[None, :]
    i_f1 = nl.arange(1)[None, :]
    gamma_t = nl.load(gamma[i_f + 0 * i_p], dtype=nl.float32, mask=(i_p < R))
    beta_t = nl.load(beta[i_f + 0 * i_p], dtype=nl.float32, mask=(i_p < R))
    for t in nl.affine_range(0, (R + 127) // 128, 1):
        x_t = nl.load(x[128 * t + i_p, i_f], dtype=nl.float32, mask=(i_p < R - 128 * t))
        red = nisa.tensor_reduce(nl.add, x_t[i_p, i_f], axis=1, dtype=nl.float32, mask=(i_p < R - 128 * t))
        div = nisa.tensor_scalar(red[i_p, i_f1], op0=nl.multiply, operand0=1.0 / C, reverse0=False, dtype=nl.float32, mask=(i_p < R - 128 * t))
        del red
        neg = nisa.tensor_scalar(div[i_p, i_f1], op0=nl.multiply, operand0=-1.0, reverse0=False, dtype=nl.float32, mask=(i_p < R - 128 * t))
        red1 = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        _ = nisa.activation_reduce(op=nl.square, data=x_t[i_p, i_f], reduce_op=nl.add, reduce_res=red1[i_p, i_f1], bias=neg[i_p, i_f1], scale=1.0, dtype=nl.float32, mask=(i_p < R - 128 * t))
        del neg
        div1 = nisa.tensor_scalar(red1[i_p, i_f1], op0=nl.multiply, operand0=1.0 / C, reverse0=False, dtype=nl.float32, mask=(i_p < R - 128 * t))
        del red1
        add = nisa.tensor_scalar(div1[i_p, i_f1], op0=nl.add, operand0=eps, reverse0=False, dtype=nl.float32, mask=(i_p < R - 128 * t))
        del div1
        rsqrt = nisa.activation(op=nl.rsqrt, data=add[i_p, i_f1], bias=None, scale=1.0, dtype=nl.float32, mask=(i_p < R - 128 * t))
        del add
        mul = nisa.tensor_scalar(x_t[i_p, i_f], op0=nl.subtract, operand0=div[i_p, i_f1], op1=nl.multiply, operand1=rsqrt[i_p, i_f1], dtype=nl.float32, mask=(i_p < R - 128 * t))
        del div, rsqrt, x_t
        mul1 = nisa.tensor_tensor(mul[i_p, i_f], gamma_t[i_p, i_f], op=nl.multiply, dtype=nl.float32, mask=(i_p < R - 128 * t))
        del mul
        add1 = nisa.tensor_tensor(mul1[i_p, i_f], beta_t[i_p, i_f], op=nl.add, dtype=nl.float32, mask=(i_p < R - 128 * t))
        del mul1
        nl.store(y[128 * t + i_p, i_f], value=add1[i_p, i_f], mask=(i_p < R - 128 * t))
        del add1
    return y
