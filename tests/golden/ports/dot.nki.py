# C2N2510: 'out' accumulates in fp32 (SBUF) as the CUDA kernel did
# C2N2507: a division is computed as a multiplication by a reciprocal
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def dot(x, y):
    N = x.shape[0]
    out = nl.ndarray((1,), dtype=nl.float32, buffer=nl.shared_hbm)
    f_size = min(4096, max(1, (N + 127) // 128))
    acc = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=acc, value=0.0)
    for t in range(N // (128 * f_size)):
        x_t = nl.ndarray((128, f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=x[128 * f_size * t:128 * f_size * t + 128 * f_size].reshape((128, f_size)))
        y_t = nl.ndarray((128, f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=y_t, src=y[128 * f_size * t:128 * f_size * t + 128 * f_size].reshape((128, f_size)))
        mul = nl.ndarray((128, f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=mul, data1=x_t, data2=y_t, op=nl.multiply)
        red = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=red, op=nl.add, data=mul, axis=1)
        nisa.tensor_tensor(dst=acc, data1=acc, data2=red, op=nl.add)
    for _t1 in range(min(1, N % (128 * f_size) // f_size)):
        x_t1 = nl.ndarray((N % (128 * f_size) // f_size, f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t1, src=x[N // (128 * f_size) * (128 * f_size):N // (128 * f_size) * (128 * f_size) + N % (128 * f_size) // f_size * f_size].reshape((N % (128 * f_size) // f_size, f_size)))
        y_t1 = nl.ndarray((N % (128 * f_size) // f_size, f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=y_t1, src=y[N // (128 * f_size) * (128 * f_size):N // (128 * f_size) * (128 * f_size) + N % (128 * f_size) // f_size * f_size].reshape((N % (128 * f_size) // f_size, f_size)))
        mul1 = nl.ndarray((N % (128 * f_size) // f_size, f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=mul1, data1=x_t1, data2=y_t1, op=nl.multiply)
        red1 = nl.ndarray((N % (128 * f_size) // f_size, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=red1, op=nl.add, data=mul1, axis=1)
        nisa.tensor_tensor(dst=acc[0:N % (128 * f_size) // f_size, 0:1], data1=acc[0:N % (128 * f_size) // f_size, 0:1], data2=red1, op=nl.add)
    for _t2 in range(min(1, N % f_size)):
        x_t2 = nl.ndarray((1, N % f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t2, src=x[N - N % f_size:N].reshape((1, N % f_size)))
        y_t2 = nl.ndarray((1, N % f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=y_t2, src=y[N - N % f_size:N].reshape((1, N % f_size)))
        mul2 = nl.ndarray((1, N % f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=mul2, data1=x_t2, data2=y_t2, op=nl.multiply)
        red2 = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=red2, op=nl.add, data=mul2, axis=1)
        nisa.tensor_tensor(dst=acc[0:1, 0:1], data1=acc[0:1, 0:1], data2=red2, op=nl.add)
    acc_tp = nl.ndarray((1, 128), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_transpose(dst=acc_tp, data=acc)
    total = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=total, op=nl.add, data=acc_tp, axis=1)
    div = nl.ndarray((1, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=div, data=total, op0=nl.multiply, operand0=1.0 / N, reverse0=False)
    nisa.dma_copy(dst=out.reshape((1, 1)), src=div)
    return out
