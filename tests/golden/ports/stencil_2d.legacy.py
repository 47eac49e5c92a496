# C2N2505: partition axis of 'v' is 'i' (parallel axis)
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def stencil_2d(u):
    M = u.shape[0]
    W = u.shape[1]
    v = nl.ndarray((M, W), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(4096)[None, :]
    for t in nl.affine_range(0, (M - 2 + 127) // 128, 1):
        for u1 in nl.affine_range(0, (W - 2 + 4095) // 4096, 1):
            u_t = nl.load(u[128 * t + i_p, 4096 * u1 + 1 + i_f], dtype=nl.float32, mask=(i_p < M - 2 - 128 * t) & (i_f < W - 2 - 4096 * u1))
            u_t1 = nl.load(u[128 * t + 2 + i_p, 4096 * u1 + 1 + i_f], dtype=nl.float32, mask=(i_p < M - 2 - 128 * t) & (i_f < W - 2 - 4096 * u1))
            add = nisa.tensor_tensor(u_t[i_p, i_f], u_t1[i_p, i_f], op=nl.add, dtype=nl.float32, mask=(i_p < M - 2 - 128 * t) & (i_f < W - 2 - 4096 * u1))
            del u_t, u_t1
            i_f_1 = nl.arange(min(4096, W - 2 - 4096 * u1) + 2)[None, :]
            u_h = nl.load(u[128 * t + 1 + i_p, 4096 * u1 + i_f_1], dtype=nl.float32, mask=(i_p < M - 2 - 128 * t))
            add1 = nisa.tensor_tensor(u_h[i_p, i_f], u_h[i_p, 2 + i_f], op=nl.add, dtype=nl.float32, mask=(i_p < M - 2 - 128 * t) & (i_f < W - 2 - 4096 * u1))
            mul = nisa.tensor_scalar(u_h[i_p, 1 + i_f], op0=nl.multiply, operand0=4.0, reverse0=True, dtype=nl.float32, mask=(i_p < M - 2 - 128 * t) & (i_f < W - 2 - 4096 * u1))
            del u_h
            add2 = nisa.tensor_tensor(add[i_p, i_f], add1[i_p, i_f], op=nl.add, dtype=nl.float32, mask=(i_p < M - 2 - 128 * t) & (i_f < W - 2 - 4096 * u1))
            del add, add1
            sub = nisa.tensor_tensor(add2[i_p, i_f], mul[i_p, i_f], op=nl.subtract, dtype=nl.float32, mask=(i_p < M - 2 - 128 * t) & (i_f < W - 2 - 4096 * u1))
            del add2, mul
            nl.store(v[128 * t + 1 + i_p, 4096 * u1 + 1 + i_f], value=sub[i_p, i_f], mask=(i_p < M - 2 - 128 * t) & (i_f < W - 2 - 4096 * u1))
            del sub
    return v
