# C2N2510: 'out' accumulates in fp32 (SBUF) as the CUDA kernel did
# C2N2507: a division is computed as a multiplication by a reciprocal
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def dot(x, y):
    N = x.shape[0]
    out = nl.ndarray((1,), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(1)[None, :]
    i_f1 = nl.arange(4096)[None, :]
    i_p1 = nl.arange(N % 524288 // 4096)[:, None]
    i_p2 = nl.arange(1)[:, None]
    i_f2 = nl.arange(N % 4096)[None, :]
    i_f3 = nl.arange(128)[None, :]
    acc = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    acc[i_p, i_f] = nisa.memset((128, 1), 0.0, nl.float32)
    for t in nl.sequential_range(0, N // 524288, 1):
        x_t = nl.load(x[524288 * t + (4096 * i_p + i_f1)], dtype=nl.float32)
        y_t = nl.load(y[524288 * t + (4096 * i_p + i_f1)], dtype=nl.float32)
        mul = nisa.tensor_tensor(x_t[i_p, i_f1], y_t[i_p, i_f1], op=nl.multiply, dtype=nl.float32)
        del x_t, y_t
        red = nisa.tensor_reduce(nl.add, mul[i_p, i_f1], axis=1, dtype=nl.float32)
        del mul
        acc[i_p, i_f] = nisa.tensor_tensor(acc[i_p, i_f], red[i_p, i_f], op=nl.add, dtype=nl.float32)
        del red
    for _t1 in nl.sequential_range(0, min(1, N % 524288 // 4096), 1):
        x_t1 = nl.load(x[N // 524288 * 524288 + (4096 * i_p1 + i_f1)], dtype=nl.float32)
        y_t1 = nl.load(y[N // 524288 * 524288 + (4096 * i_p1 + i_f1)], dtype=nl.float32)
        mul1 = nisa.tensor_tensor(x_t1[i_p1, i_f1], y_t1[i_p1, i_f1], op=nl.multiply, dtype=nl.float32)
        del x_t1, y_t1
        red1 = nisa.tensor_reduce(nl.add, mul1[i_p1, i_f1], axis=1, dtype=nl.float32)
        del mul1
        acc[i_p1, i_f] = nisa.tensor_tensor(acc[i_p1, i_f], red1[i_p1, i_f], op=nl.add, dtype=nl.float32)
        del red1
    for _t2 in nl.sequential_range(0, min(1, N % 4096), 1):
        x_t2 = nl.load(x[N - N % 4096 + (N % 4096 * i_p2 + i_f2)], dtype=nl.float32)
        y_t2 = nl.load(y[N - N % 4096 + (N % 4096 * i_p2 + i_f2)], dtype=nl.float32)
        mul2 = nisa.tensor_tensor(x_t2[i_p2, i_f2], y_t2[i_p2, i_f2], op=nl.multiply, dtype=nl.float32)
        del x_t2, y_t2
        red2 = nisa.tensor_reduce(nl.add, mul2[i_p2, i_f2], axis=1, dtype=nl.float32)
        del mul2
        acc[i_p2, i_f] = nisa.tensor_tensor(acc[i_p2, i_f], red2[i_p2, i_f], op=nl.add, dtype=nl.float32)
        del red2
    acc_tp = nisa.nc_transpose(acc[i_p, i_f], dtype=nl.float32)
    del acc
    total = nisa.tensor_reduce(nl.add, acc_tp[i_p2, i_f3], axis=1, dtype=nl.float32)
    del acc_tp
    div = nisa.tensor_scalar(total[i_p2, i_f], op0=nl.multiply, operand0=1.0 / N, reverse0=False, dtype=nl.float32)
    del total
    nl.store(out[i_p2], value=div[i_p2, i_f])
    return out
