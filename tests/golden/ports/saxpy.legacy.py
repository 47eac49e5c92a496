# C2N2505: partition axis of 'y' is 'i' (parallel axis)
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def saxpy(x, y, alpha):
    n = x.shape[0]
    y_out = nl.ndarray((n,), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(512)[None, :]
    i_p1 = nl.arange(n % (128 * min(512, max(1, (n + 127) // 128))) // min(512, max(1, (n + 127) // 128)))[:, None]
    i_p2 = nl.arange(1)[:, None]
    i_f1 = nl.arange(n % min(512, max(1, (n + 127) // 128)))[None, :]
    for t in nl.affine_range(0, n // (128 * min(512, max(1, (n + 127) // 128))), 1):
        x_t = nl.load(x[128 * min(512, max(1, (n + 127) // 128)) * t + (min(512, max(1, (n + 127) // 128)) * i_p + i_f)], dtype=nl.float32, mask=(i_f < max(1, (n + 127) // 128)))
        y_t = nl.load(y[128 * min(512, max(1, (n + 127) // 128)) * t + (min(512, max(1, (n + 127) // 128)) * i_p + i_f)], dtype=nl.float32, mask=(i_f < max(1, (n + 127) // 128)))
        mul = nisa.tensor_scalar(x_t[i_p, i_f], op0=nl.multiply, operand0=alpha, reverse0=True, dtype=nl.float32, mask=(i_f < max(1, (n + 127) // 128)))
        del x_t
        add = nisa.tensor_tensor(mul[i_p, i_f], y_t[i_p, i_f], op=nl.add, dtype=nl.float32, mask=(i_f < max(1, (n + 127) // 128)))
        del mul, y_t
        nl.store(y_out[128 * min(512, max(1, (n + 127) // 128)) * t + (min(512, max(1, (n + 127) // 128)) * i_p + i_f)], value=add[i_p, i_f], mask=(i_f < max(1, (n + 127) // 128)))
        del add
    for _t1 in nl.affine_range(0, min(1, n % (128 * min(512, max(1, (n + 127) // 128))) // min(512, max(1, (n + 127) // 128))), 1):
        x_t1 = nl.load(x[n // (128 * min(512, max(1, (n + 127) // 128))) * (128 * min(512, max(1, (n + 127) // 128))) + (min(512, max(1, (n + 127) // 128)) * i_p1 + i_f)], dtype=nl.float32, mask=(i_f < max(1, (n + 127) // 128)))
        y_t1 = nl.load(y[n // (128 * min(512, max(1, (n + 127) // 128))) * (128 * min(512, max(1, (n + 127) // 128))) + (min(512, max(1, (n + 127) // 128)) * i_p1 + i_f)], dtype=nl.float32, mask=(i_f < max(1, (n + 127) // 128)))
        mul1 = nisa.tensor_scalar(x_t1[i_p1, i_f], op0=nl.multiply, operand0=alpha, reverse0=True, dtype=nl.float32, mask=(i_f < max(1, (n + 127) // 128)))
        del x_t1
        add1 = nisa.tensor_tensor(mul1[i_p1, i_f], y_t1[i_p1, i_f], op=nl.add, dtype=nl.float32, mask=(i_f < max(1, (n + 127) // 128)))
        del mul1, y_t1
        nl.store(y_out[n // (128 * min(512, max(1, (n + 127) // 128))) * (128 * min(512, max(1, (n + 127) // 128))) + (min(512, max(1, (n + 127) // 128)) * i_p1 + i_f)], value=add1[i_p1, i_f], mask=(i_f < max(1, (n + 127) // 128)))
        del add1
    for _t2 in nl.affine_range(0, min(1, n % min(512, max(1, (n + 127) // 128))), 1):
        x_t2 = nl.load(x[n - n % min(512, max(1, (n + 127) // 128)) + (n % min(512, max(1, (n + 127) // 128)) * i_p2 + i_f1)], dtype=nl.float32)
        y_t2 = nl.load(y[n - n % min(512, max(1, (n + 127) // 128)) + (n % min(512, max(1, (n + 127) // 128)) * i_p2 + i_f1)], dtype=nl.float32)
        mul2 = nisa.tensor_scalar(x_t2[i_p2, i_f1], op0=nl.multiply, operand0=alpha, reverse0=True, dtype=nl.float32)
        del x_t2
        add2 = nisa.tensor_tensor(mul2[i_p2, i_f1], y_t2[i_p2, i_f1], op=nl.add, dtype=nl.float32)
        del mul2, y_t2
        nl.store(y_out[n - n % min(512, max(1, (n + 127) // 128)) + (n % min(512, max(1, (n + 127) // 128)) * i_p2 + i_f1)], value=add2[i_p2, i_f1])
        del add2
    return y_out
