# C2N2505: partition axis of 'y' is 'i' (parallel axis)
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def saxpy(x, y, alpha):
    n = x.shape[0]
    y_out = nl.ndarray((n,), dtype=nl.float32, buffer=nl.shared_hbm)
    f_size = min(512, max(1, (n + 127) // 128))
    for t in range(n // (128 * f_size)):
        x_t = nl.ndarray((128, f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=x[128 * f_size * t:128 * f_size * t + 128 * f_size].reshape((128, f_size)))
        y_t = nl.ndarray((128, f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=y_t, src=y[128 * f_size * t:128 * f_size * t + 128 * f_size].reshape((128, f_size)))
        mul = nl.ndarray((128, f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=mul, data=x_t, op0=nl.multiply, operand0=alpha, reverse0=True)
        add = nl.ndarray((128, f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=add, data1=mul, data2=y_t, op=nl.add)
        nisa.dma_copy(dst=y_out[128 * f_size * t:128 * f_size * t + 128 * f_size].reshape((128, f_size)), src=add)
    for _t1 in range(min(1, n % (128 * f_size) // f_size)):
        x_t1 = nl.ndarray((n % (128 * f_size) // f_size, f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t1, src=x[n // (128 * f_size) * (128 * f_size):n // (128 * f_size) * (128 * f_size) + n % (128 * f_size) // f_size * f_size].reshape((n % (128 * f_size) // f_size, f_size)))
        y_t1 = nl.ndarray((n % (128 * f_size) // f_size, f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=y_t1, src=y[n // (128 * f_size) * (128 * f_size):n // (128 * f_size) * (128 * f_size) + n % (128 * f_size) // f_size * f_size].reshape((n % (128 * f_size) // f_size, f_size)))
        mul1 = nl.ndarray((n % (128 * f_size) // f_size, f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=mul1, data=x_t1, op0=nl.multiply, operand0=alpha, reverse0=True)
        add1 = nl.ndarray((n % (128 * f_size) // f_size, f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=add1, data1=mul1, data2=y_t1, op=nl.add)
        nisa.dma_copy(dst=y_out[n // (128 * f_size) * (128 * f_size):n // (128 * f_size) * (128 * f_size) + n % (128 * f_size) // f_size * f_size].reshape((n % (128 * f_size) // f_size, f_size)), src=add1)
    for _t2 in range(min(1, n % f_size)):
        x_t2 = nl.ndarray((1, n % f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t2, src=x[n - n % f_size:n].reshape((1, n % f_size)))
        y_t2 = nl.ndarray((1, n % f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=y_t2, src=y[n - n % f_size:n].reshape((1, n % f_size)))
        mul2 = nl.ndarray((1, n % f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=mul2, data=x_t2, op0=nl.multiply, operand0=alpha, reverse0=True)
        add2 = nl.ndarray((1, n % f_size), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=add2, data1=mul2, data2=y_t2, op=nl.add)
        nisa.dma_copy(dst=y_out[n - n % f_size:n].reshape((1, n % f_size)), src=add2)
    return y_out
