# C2N2505: partition axis of 'out' is 'i' (parallel axis)
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def bias_gelu(in_, bias):
    R = in_.shape[0]
    C = in_.shape[1]
    out = nl.ndarray((R, C), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(4096)[None, :]
    for u in nl.affine_range(0, (C + 4095) // 4096, 1):
        bias_t = nl.load(bias[4096 * u + i_f + 0 * i_p], dtype=nl.float32, mask=(i_p < R) & (i_f < C - 4096 * u))
        for t in nl.affine_range(0, (R + 127) // 128, 1):
            in_t = nl.load(in_[128 * t + i_p, 4096 * u + i_f], dtype=nl.float32, mask=(i_p < R - 128 * t) & (i_f < C - 4096 * u))
            add = nisa.tensor_tensor(in_t[i_p, i_f], bias_t[i_p, i_f], op=nl.add, dtype=nl.float32, mask=(i_p < R - 128 * t) & (i_f < C - 4096 * u))
            del in_t
            gelu_tanh = nisa.activation(op=nl.gelu_apprx_tanh, data=add[i_p, i_f], bias=None, scale=1.0, dtype=nl.float32, mask=(i_p < R - 128 * t) & (i_f < C - 4096 * u))
            del add
            nl.store(out[128 * t + i_p, 4096 * u + i_f], value=gelu_tanh[i_p, i_f], mask=(i_p < R - 128 * t) & (i_f < C - 4096 * u))
            del gelu_tanh
        del bias_t
    return out
