# C2N2510: 'out' accumulates in fp32 (SBUF) as the CUDA kernel did
# C2N2507: division at this line is computed as multiplication by a reciprocal
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def dot(x, y):
    N = x.shape[0]
    out = nl.ndarray((1,), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    acc[...] = nisa.memset((128, 1), 0.0, nl.float32)
    for t in nl.sequential_range(0, N // 524288, 1):
        x_t = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.sbuf)
        x_t[...] = nl.load(x[524288 * t:524288 * t + 524288].reshape((128, 4096)))
        y_t = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.sbuf)
        y_t[...] = nl.load(y[524288 * t:524288 * t + 524288].reshape((128, 4096)))
        mul = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.sbuf)
        mul[...] = nisa.tensor_tensor(x_t, y_t, op=nl.multiply)
        red = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        red[...] = nisa.tensor_reduce(nl.add, mul, axis=1)
        acc[...] = nisa.tensor_tensor(acc, red, op=nl.add)
    for _t1 in nl.sequential_range(0, min(1, N % 524288 // 4096), 1):
        x_t1 = nl.ndarray((N % 524288 // 4096, 4096), dtype=nl.float32, buffer=nl.sbuf)
        x_t1[...] = nl.load(x[N // 524288 * 524288:N // 524288 * 524288 + N % 524288 // 4096 * 4096].reshape((N % 524288 // 4096, 4096)))
        y_t1 = nl.ndarray((N % 524288 // 4096, 4096), dtype=nl.float32, buffer=nl.sbuf)
        y_t1[...] = nl.load(y[N // 524288 * 524288:N // 524288 * 524288 + N % 524288 // 4096 * 4096].reshape((N % 524288 // 4096, 4096)))
        mul1 = nl.ndarray((N % 524288 // 4096, 4096), dtype=nl.float32, buffer=nl.sbuf)
        mul1[...] = nisa.tensor_tensor(x_t1, y_t1, op=nl.multiply)
        red1 = nl.ndarray((N % 524288 // 4096, 1), dtype=nl.float32, buffer=nl.sbuf)
        red1[...] = nisa.tensor_reduce(nl.add, mul1, axis=1)
        acc[0:N % 524288 // 4096, 0:1] = nisa.tensor_tensor(acc[0:N % 524288 // 4096, 0:1], red1, op=nl.add)
    for _t2 in nl.sequential_range(0, min(1, N % 4096), 1):
        x_t2 = nl.ndarray((1, N % 4096), dtype=nl.float32, buffer=nl.sbuf)
        x_t2[...] = nl.load(x[N - N % 4096:N - N % 4096 + 1 * (N % 4096)].reshape((1, N % 4096)))
        y_t2 = nl.ndarray((1, N % 4096), dtype=nl.float32, buffer=nl.sbuf)
        y_t2[...] = nl.load(y[N - N % 4096:N - N % 4096 + 1 * (N % 4096)].reshape((1, N % 4096)))
        mul2 = nl.ndarray((1, N % 4096), dtype=nl.float32, buffer=nl.sbuf)
        mul2[...] = nisa.tensor_tensor(x_t2, y_t2, op=nl.multiply)
        red2 = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
        red2[...] = nisa.tensor_reduce(nl.add, mul2, axis=1)
        acc[0:1, 0:1] = nisa.tensor_tensor(acc[0:1, 0:1], red2, op=nl.add)
    acc_tp = nl.ndarray((1, 128), dtype=nl.float32, buffer=nl.psum)
    acc_tp[...] = nisa.nc_transpose(acc)
    total = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    total[...] = nisa.tensor_reduce(nl.add, acc_tp, axis=1)
    div = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    div[...] = nisa.tensor_scalar(total, op0=nl.multiply, operand0=1.0 / N, reverse0=False)
    nl.store(out.reshape((1, 1)), value=div)
    return out
