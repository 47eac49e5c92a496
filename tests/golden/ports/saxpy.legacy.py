# C2N2505: partition axis of 'y' is 'i' (parallel axis)
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def saxpy(x, y, alpha):
    n = x.shape[0]
    y_out = nl.ndarray((n,), dtype=nl.float32, buffer=nl.shared_hbm)
    for t in nl.affine_range(0, n // 65536, 1):
        x_t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        x_t[...] = nl.load(x[65536 * t:65536 * t + 65536].reshape((128, 512)))
        y_t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        y_t[...] = nl.load(y[65536 * t:65536 * t + 65536].reshape((128, 512)))
        mul = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        mul[...] = nisa.tensor_scalar(x_t, op0=nl.multiply, operand0=alpha, reverse0=True)
        add = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        add[...] = nisa.tensor_tensor(mul, y_t, op=nl.add)
        nl.store(y_out[65536 * t:65536 * t + 65536].reshape((128, 512)), value=add)
    for _t1 in nl.affine_range(0, min(1, n % 65536 // 512), 1):
        x_t1 = nl.ndarray((n % 65536 // 512, 512), dtype=nl.float32, buffer=nl.sbuf)
        x_t1[...] = nl.load(x[n // 65536 * 65536:n // 65536 * 65536 + n % 65536 // 512 * 512].reshape((n % 65536 // 512, 512)))
        y_t1 = nl.ndarray((n % 65536 // 512, 512), dtype=nl.float32, buffer=nl.sbuf)
        y_t1[...] = nl.load(y[n // 65536 * 65536:n // 65536 * 65536 + n % 65536 // 512 * 512].reshape((n % 65536 // 512, 512)))
        mul1 = nl.ndarray((n % 65536 // 512, 512), dtype=nl.float32, buffer=nl.sbuf)
        mul1[...] = nisa.tensor_scalar(x_t1, op0=nl.multiply, operand0=alpha, reverse0=True)
        add1 = nl.ndarray((n % 65536 // 512, 512), dtype=nl.float32, buffer=nl.sbuf)
        add1[...] = nisa.tensor_tensor(mul1, y_t1, op=nl.add)
        nl.store(y_out[n // 65536 * 65536:n // 65536 * 65536 + n % 65536 // 512 * 512].reshape((n % 65536 // 512, 512)), value=add1)
    for _t2 in nl.affine_range(0, min(1, n % 512), 1):
        x_t2 = nl.ndarray((1, n % 512), dtype=nl.float32, buffer=nl.sbuf)
        x_t2[...] = nl.load(x[n - n % 512:n - n % 512 + 1 * (n % 512)].reshape((1, n % 512)))
        y_t2 = nl.ndarray((1, n % 512), dtype=nl.float32, buffer=nl.sbuf)
        y_t2[...] = nl.load(y[n - n % 512:n - n % 512 + 1 * (n % 512)].reshape((1, n % 512)))
        mul2 = nl.ndarray((1, n % 512), dtype=nl.float32, buffer=nl.sbuf)
        mul2[...] = nisa.tensor_scalar(x_t2, op0=nl.multiply, operand0=alpha, reverse0=True)
        add2 = nl.ndarray((1, n % 512), dtype=nl.float32, buffer=nl.sbuf)
        add2[...] = nisa.tensor_tensor(mul2, y_t2, op=nl.add)
        nl.store(y_out[n - n % 512:n - n % 512 + 1 * (n % 512)].reshape((1, n % 512)), value=add2)
    return y_out
