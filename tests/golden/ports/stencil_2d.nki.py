# C2N2505: partition axis of 'v' is 'i' (parallel axis)
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def stencil_2d(u):
    M = u.shape[0]
    W = u.shape[1]
    v = nl.ndarray((M, W), dtype=nl.float32, buffer=nl.shared_hbm)
    for t in range((M - 2 + 127) // 128):
        t_n = min(128, M - 2 - 128 * t)
        for u1 in range((W - 2 + 4095) // 4096):
            u1_n = min(4096, W - 2 - 4096 * u1)
            u_t = nl.ndarray((t_n, u1_n), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=u_t, src=u[128 * t:128 * t + t_n, 4096 * u1 + 1:4096 * u1 + 1 + u1_n])
            u_t1 = nl.ndarray((t_n, u1_n), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=u_t1, src=u[128 * t + 2:128 * t + 2 + t_n, 4096 * u1 + 1:4096 * u1 + 1 + u1_n])
            add = nl.ndarray((t_n, u1_n), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=add, data1=u_t, data2=u_t1, op=nl.add)
            u_h = nl.ndarray((t_n, u1_n + 2), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=u_h, src=u[128 * t + 1:128 * t + 1 + t_n, 4096 * u1:4096 * u1 + (u1_n + 2)])
            add1 = nl.ndarray((t_n, u1_n), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=add1, data1=u_h[0:t_n, 0:u1_n], data2=u_h[0:t_n, 2:2 + u1_n], op=nl.add)
            mul = nl.ndarray((t_n, u1_n), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_scalar(dst=mul, data=u_h[0:t_n, 1:1 + u1_n], op0=nl.multiply, operand0=4.0, reverse0=True)
            add2 = nl.ndarray((t_n, u1_n), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=add2, data1=add, data2=add1, op=nl.add)
            sub = nl.ndarray((t_n, u1_n), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=sub, data1=add2, data2=mul, op=nl.subtract)
            nisa.dma_copy(dst=v[128 * t + 1:128 * t + 1 + t_n, 4096 * u1 + 1:4096 * u1 + 1 + u1_n], src=sub)
    return v
