# C2N2505: partition axis of 'out' is 'i' (parallel axis)
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def bias_gelu(in_, bias):
    R = in_.shape[0]
    C = in_.shape[1]
    out = nl.ndarray((R, C), dtype=nl.float32, buffer=nl.shared_hbm)
    for t in range((R + 128 - 1) // 128):
        for u in range((C + 4096 - 1) // 4096):
            in_t = nl.ndarray((min(128, R - 128 * t), min(4096, C - 4096 * u)), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=in_t, src=in_[128 * t:128 * t + min(128, R - 128 * t), 4096 * u:4096 * u + min(4096, C - 4096 * u)])
            bias_t = nl.ndarray((min(128, R), min(4096, C - 4096 * u)), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=bias_t, src=bias.ap(pattern=[[0, min(128, R)], [1, min(4096, C - 4096 * u)]], offset=4096 * u))
            add = nl.ndarray((min(128, R - 128 * t), min(4096, C - 4096 * u)), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=add, data1=in_t, data2=bias_t[0:min(128, R - 128 * t), 0:min(4096, C - 4096 * u)], op=nl.add)
            gelu_tanh = nl.ndarray((min(128, R - 128 * t), min(4096, C - 4096 * u)), dtype=nl.float32, buffer=nl.sbuf)
            nisa.activation(dst=gelu_tanh, op=nl.gelu_apprx_tanh, data=add, bias=None, scale=1.0)
            nisa.dma_copy(dst=out[128 * t:128 * t + min(128, R - 128 * t), 4096 * u:4096 * u + min(4096, C - 4096 * u)], src=gelu_tanh)
    return out
