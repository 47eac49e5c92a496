# C2N2505: partition axis of 'mean' is 'i' (parallel axis)
# C2N2505: partition axis of 'rstd' is 'i' (parallel axis)
# C2N2505: partition axis of 'y' is 'i' (parallel axis)
# C2N2510: 'mean' accumulates in fp32 (SBUF) as the CUDA kernel did
# C2N2510: 'rstd' accumulates in fp32 (SBUF) as the CUDA kernel did
# C2N2507: division at this line is computed as multiplication by a reciprocal
# C2N2507: division at this line is computed as multiplication by a reciprocal
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def layernorm(x, gamma, beta, eps):
    R = x.shape[0]
    C = x.shape[1]
    y = nl.ndarray((R, C), dtype=nl.float32, buffer=nl.shared_hbm)
    gamma_t = nl.ndarray((min(128, R), C), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=gamma_t, src=gamma.ap(pattern=[[0, min(128, R)], [1, C]], offset=0))
    beta_t = nl.ndarray((min(128, R), C), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=beta_t, src=beta.ap(pattern=[[0, min(128, R)], [1, C]], offset=0))
    for t in range((R + 128 - 1) // 128):
        x_t = nl.ndarray((min(128, R - 128 * t), C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=x[128 * t:128 * t + min(128, R - 128 * t), 0:C])
        red = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=red, op=nl.add, data=x_t, axis=1)
        den = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=den, value=0.0)
        nisa.tensor_scalar(dst=den, data=den, op0=nl.add, operand0=C, reverse0=False)
        recip = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=recip, data=den)
        quot = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=quot, data1=red, data2=recip, op=nl.multiply)
        sub = nl.ndarray((min(128, R - 128 * t), C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=sub, data=x_t, op0=nl.subtract, operand0=quot, reverse0=False)
        mul = nl.ndarray((min(128, R - 128 * t), C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=mul, data1=sub, data2=sub, op=nl.multiply)
        red1 = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=red1, op=nl.add, data=mul, axis=1)
        den1 = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=den1, value=0.0)
        nisa.tensor_scalar(dst=den1, data=den1, op0=nl.add, operand0=C, reverse0=False)
        recip1 = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=recip1, data=den1)
        quot1 = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=quot1, data1=red1, data2=recip1, op=nl.multiply)
        add = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=add, data=quot1, op0=nl.add, operand0=eps, reverse0=False)
        rsqrt = nl.ndarray((min(128, R - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=rsqrt, op=nl.rsqrt, data=add, bias=None, scale=1.0)
        mul1 = nl.ndarray((min(128, R - 128 * t), C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=mul1, data=sub, op0=nl.multiply, operand0=rsqrt, reverse0=False)
        mul2 = nl.ndarray((min(128, R - 128 * t), C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=mul2, data1=mul1, data2=gamma_t[0:min(128, R - 128 * t), 0:C], op=nl.multiply)
        add1 = nl.ndarray((min(128, R - 128 * t), C), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=add1, data1=mul2, data2=beta_t[0:min(128, R - 128 * t), 0:C], op=nl.add)
        nisa.dma_copy(dst=y[128 * t:128 * t + min(128, R - 128 * t), 0:C], src=add1)
    return y
