# C2N2510: 'out' accumulates in fp32 (SBUF) as the CUDA kernel did
# C2N2507: a division is computed as a multiplication by a reciprocal
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def dot(x, y):
    N = x.shape[0]
    out = nl.ndarray((1,), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=acc, value=0.0)
    for t in range(N // 524288):
        x_t = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t, src=x[524288 * t:524288 * t + 524288].reshape((128, 4096)))
        y_t = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=y_t, src=y[524288 * t:524288 * t + 524288].reshape((128, 4096)))
        mul = nl.ndarray((128, 4096), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=mul, data1=x_t, data2=y_t, op=nl.multiply)
        red = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=red, op=nl.add, data=mul, axis=1)
        nisa.tensor_tensor(dst=acc, data1=acc, data2=red, op=nl.add)
    for _t1 in range(min(1, N % 524288 // 4096)):
        x_t1 = nl.ndarray((N % 524288 // 4096, 4096), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t1, src=x[N // 524288 * 524288:N // 524288 * 524288 + N % 524288 // 4096 * 4096].reshape((N % 524288 // 4096, 4096)))
        y_t1 = nl.ndarray((N % 524288 // 4096, 4096), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=y_t1, src=y[N // 524288 * 524288:N // 524288 * 524288 + N % 524288 // 4096 * 4096].reshape((N % 524288 // 4096, 4096)))
        mul1 = nl.ndarray((N % 524288 // 4096, 4096), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=mul1, data1=x_t1, data2=y_t1, op=nl.multiply)
        red1 = nl.ndarray((N % 524288 // 4096, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=red1, op=nl.add, data=mul1, axis=1)
        nisa.tensor_tensor(dst=acc[0:N % 524288 // 4096, 0:1], data1=acc[0:N % 524288 // 4096, 0:1], data2=red1, op=nl.add)
    for _t2 in range(min(1, N % 4096)):
        x_t2 = nl.ndarray((1, N % 4096), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=x_t2, src=x[N - N % 4096:N - N % 4096 + 1 * (N % 4096)].reshape((1, N % 4096)))
        y_t2 = nl.ndarray((1, N % 4096), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=y_t2, src=y[N - N % 4096:N - N % 4096 + 1 * (N % 4096)].reshape((1, N % 4096)))
        mul2 = nl.ndarray((1, N % 4096), dtype=nl.float32, buffer=nl.sbuf)
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
