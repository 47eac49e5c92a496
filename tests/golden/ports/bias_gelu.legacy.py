# C2N2505: partition axis of 'out' is 'i' (parallel axis)
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def bias_gelu(in_, bias):
    R = in_.shape[0]
    C = in_.shape[1]
    out = nl.ndarray((R, C), dtype=nl.float32, buffer=nl.shared_hbm)
    for t in nl.affine_range(0, (R + 128 - 1) // 128, 1):
        for u in nl.affine_range(0, (C + 4096 - 1) // 4096, 1):
            in_t = nl.ndarray((min(128, R - 128 * t), min(4096, C - 4096 * u)), dtype=nl.float32, buffer=nl.sbuf)
            in_t[...] = nl.load(in_[128 * t:128 * t + min(128, R - 128 * t), 4096 * u:4096 * u + min(4096, C - 4096 * u)])
            bias_t = nl.ndarray((min(128, R), min(4096, C - 4096 * u)), dtype=nl.float32, buffer=nl.sbuf)
            bias_t[...] = nl.load(bias.ap(pattern=[[0, min(128, R)], [1, min(4096, C - 4096 * u)]], offset=4096 * u))
            add = nl.ndarray((min(128, R - 128 * t), min(4096, C - 4096 * u)), dtype=nl.float32, buffer=nl.sbuf)
            add[...] = nisa.tensor_tensor(in_t, bias_t[0:min(128, R - 128 * t), 0:min(4096, C - 4096 * u)], op=nl.add)
            gelu_tanh = nl.ndarray((min(128, R - 128 * t), min(4096, C - 4096 * u)), dtype=nl.float32, buffer=nl.sbuf)
            gelu_tanh[...] = nisa.activation(op=nl.gelu_apprx_tanh, data=add, bias=None, scale=1.0)
            nl.store(out[128 * t:128 * t + min(128, R - 128 * t), 4096 * u:4096 * u + min(4096, C - 4096 * u)], value=gelu_tanh)
    return out
