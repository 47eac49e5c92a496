# C2N2505: partition axis of 'y' is 'i' (parallel axis)
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def saxpy(x, y, alpha):
    n = x.shape[0]
    y_out = nl.ndarray((n,), dtype=nl.float32, buffer=nl.shared_hbm)
    for t in range(n // 65536):
        x_t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=x[65536 * t:65536 * t + 65536].reshape((128, 512)))
        y_t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=y_t, src=y[65536 * t:65536 * t + 65536].reshape((128, 512)))
        mul = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=mul, data=x_t, op0=nl.multiply, operand0=alpha, reverse0=True)
        add = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=add, data1=mul, data2=y_t, op=nl.add)
        nisa.dma_copy(dst=y_out[65536 * t:65536 * t + 65536].reshape((128, 512)), src=add)
    for _t1 in range(min(1, n % 65536 // 512)):
        x_t1 = nl.ndarray((n % 65536 // 512, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t1, src=x[n // 65536 * 65536:n // 65536 * 65536 + n % 65536 // 512 * 512].reshape((n % 65536 // 512, 512)))
        y_t1 = nl.ndarray((n % 65536 // 512, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=y_t1, src=y[n // 65536 * 65536:n // 65536 * 65536 + n % 65536 // 512 * 512].reshape((n % 65536 // 512, 512)))
        mul1 = nl.ndarray((n % 65536 // 512, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=mul1, data=x_t1, op0=nl.multiply, operand0=alpha, reverse0=True)
        add1 = nl.ndarray((n % 65536 // 512, 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=add1, data1=mul1, data2=y_t1, op=nl.add)
        nisa.dma_copy(dst=y_out[n // 65536 * 65536:n // 65536 * 65536 + n % 65536 // 512 * 512].reshape((n % 65536 // 512, 512)), src=add1)
    for _t2 in range(min(1, n % 512)):
        x_t2 = nl.ndarray((1, n % 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t2, src=x[n - n % 512:n - n % 512 + 1 * (n % 512)].reshape((1, n % 512)))
        y_t2 = nl.ndarray((1, n % 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=y_t2, src=y[n - n % 512:n - n % 512 + 1 * (n % 512)].reshape((1, n % 512)))
        mul2 = nl.ndarray((1, n % 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=mul2, data=x_t2, op0=nl.multiply, operand0=alpha, reverse0=True)
        add2 = nl.ndarray((1, n % 512), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=add2, data1=mul2, data2=y_t2, op=nl.add)
        nisa.dma_copy(dst=y_out[n - n % 512:n - n % 512 + 1 * (n % 512)].reshape((1, n % 512)), src=add2)
    return y_out
