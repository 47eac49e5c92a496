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
    i_f1 = nl.arange(6)[None, :]
    i_f2 = nl.arange(512)[None, :]
    i_f3 = nl.arange((C + 511) // 512 * 6)[None, :]
    i_f4 = nl.arange(1)[None, :]
    gamma_t = nl.load(gamma[i_f + 0 * i_p], dtype=nl.float32, mask=(i_p < R))
    beta_t = nl.load(beta[i_f + 0 * i_p], dtype=nl.float32, mask=(i_p < R))
    for t in nl.affine_range(0, (R + 127) // 128, 1):
        x_t = nl.load(x[128 * t + i_p, i_f], dtype=nl.float32, mask=(i_p < R - 128 * t))
        stats = nl.ndarray((128, (C + 511) // 512 * 6), dtype=nl.float32, buffer=nl.sbuf)
        for c in nl.affine_range(0, (C + 511) // 512, 1):
            stats[i_p, 6 * c + i_f1] = nisa.bn_stats(x_t[i_p, 512 * c + i_f2], dtype=nl.float32, mask=(i_p < R - 128 * t) & (i_f2 < C - 512 * c))
        mv = nisa.bn_aggr(stats[i_p, i_f3], dtype=nl.float32, mask=(i_p < R - 128 * t))
        del stats
        add = nisa.tensor_scalar(mv[i_p, 1 + i_f4], op0=nl.add, operand0=eps, reverse0=False, dtype=nl.float32, mask=(i_p < R - 128 * t))
        rsqrt = nisa.activation(op=nl.rsqrt, data=add[i_p, i_f4], bias=None, scale=1.0, dtype=nl.float32, mask=(i_p < R - 128 * t))
        del add
        nb = nisa.tensor_scalar(mv[i_p, i_f4], op0=nl.multiply, operand0=rsqrt[i_p, i_f4], op1=nl.multiply, operand1=-1.0, dtype=nl.float32, mask=(i_p < R - 128 * t))
        del mv
        mul = nisa.activation(op=nl.copy, data=x_t[i_p, i_f], bias=nb[i_p, i_f4], scale=rsqrt[i_p, i_f4], dtype=nl.float32, mask=(i_p < R - 128 * t))
        del nb, rsqrt, x_t
        mul1 = nisa.tensor_tensor(mul[i_p, i_f], gamma_t[i_p, i_f], op=nl.multiply, dtype=nl.float32, mask=(i_p < R - 128 * t))
        del mul
        add1 = nisa.tensor_tensor(mul1[i_p, i_f], beta_t[i_p, i_f], op=nl.add, dtype=nl.float32, mask=(i_p < R - 128 * t))
        del mul1
        nl.store(y[128 * t + i_p, i_f], value=add1[i_p, i_f], mask=(i_p < R - 128 * t))
        del add1
    return y
