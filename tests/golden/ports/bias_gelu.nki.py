# C2N2505: partition axis of 'out' is 'i' (parallel axis)
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def bias_gelu(in_, bias):
    R = in_.shape[0]
    C = in_.shape[1]
    out = nl.ndarray((R, C), dtype=nl.float32, buffer=nl.shared_hbm)
    for u in range((C + 4095) // 4096):
        u_n = min(4096, C - 4096 * u)
        bias_t = nl.ndarray((min(128, R), u_n), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=bias_t, src=bias.ap(pattern=[[0, min(128, R)], [1, u_n]], offset=4096 * u))
        for t in range((R + 127) // 128):
            t_n = min(128, R - 128 * t)
            in_t = nl.ndarray((t_n, u_n), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=in_t, src=in_[128 * t:128 * t + t_n, 4096 * u:4096 * u + u_n])
            add = nl.ndarray((t_n, u_n), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=add, data1=in_t, data2=bias_t[0:t_n, 0:u_n], op=nl.add)
            gelu_tanh = nl.ndarray((t_n, u_n), dtype=nl.float32, buffer=nl.sbuf)
            nisa.activation(dst=gelu_tanh, op=nl.gelu_apprx_tanh, data=add, bias=None, scale=1.0)
            nisa.dma_copy(dst=out[128 * t:128 * t + t_n, 4096 * u:4096 * u + u_n], src=gelu_tanh)
    return out
