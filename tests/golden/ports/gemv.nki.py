# C2N2505: partition axis of 'y' is 'i' (parallel axis)
# C2N2510: 'y' accumulates in fp32 (SBUF) as the CUDA kernel did
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def gemv(A, x):
    M = A.shape[0]
    K = A.shape[1]
    y = nl.ndarray((M,), dtype=nl.float32, buffer=nl.shared_hbm)
    x_t = nl.ndarray((min(128, M), K), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x_t, src=x.ap(pattern=[[0, min(128, M)], [1, K]], offset=0))
    for t in range((M + 127) // 128):
        t_n = min(128, M - 128 * t)
        A_t = nl.ndarray((t_n, K), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=A_t, src=A[128 * t:128 * t + t_n, 0:K])
        mul = nl.ndarray((t_n, K), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=mul, data1=A_t, data2=x_t[0:t_n, 0:K], op=nl.multiply)
        red = nl.ndarray((t_n, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=red, op=nl.add, data=mul, axis=1)
        # cuda2nki: ignore[C2N5007] one result per row: each float32 element of 'y' is computed from a row of 'A' (K values) reduced on one partition, and every output of the kernel is one such result per row, so each tile of up to 128 rows stores 4 B per partition
        nisa.dma_copy(dst=y[128 * t:128 * t + t_n].reshape((t_n, 1)), src=red)
    return y
