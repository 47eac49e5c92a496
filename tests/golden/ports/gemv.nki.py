# C2N2505: partition axis of 'y' is 'k' (contraction axis)
# C2N2510: 'y' accumulates in fp32 (PSUM) as the CUDA kernel did
# C2N2506: operand 'A' is loaded transposed (tensor-engine transpose through PSUM) because the contraction axis must be on partitions
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def gemv(A, x):
    M = A.shape[0]
    K = A.shape[1]
    y = nl.ndarray((M,), dtype=nl.float32, buffer=nl.shared_hbm)
    x_t = nl.ndarray((min(128, K - 0), 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x_t, src=x[0:min(128, K - 0)].reshape((min(128, K - 0), 1)))
    for t in range((M + 128 - 1) // 128):
        A_T = nl.ndarray((128, (K + 128 - 1) // 128, min(128, M - 128 * t)), dtype=nl.float32, buffer=nl.sbuf)
        for k in range((K + 128 - 1) // 128):
            A_t = nl.ndarray((min(128, M - 128 * t), min(128, K - 128 * k)), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=A_t, src=A[128 * t:128 * t + min(128, M - 128 * t), 128 * k:128 * k + min(128, K - 128 * k)])
            A_tp = nl.ndarray((min(128, K - 128 * k), min(128, M - 128 * t)), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_transpose(dst=A_tp, data=A_t)
            nisa.tensor_copy(dst=A_T[0:min(128, K - 128 * k), k, 0:min(128, M - 128 * t)], src=A_tp)
        acc = nl.ndarray((min(128, M - 128 * t), 1), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=acc, stationary=A_T[0:min(128, K - 0), 0, 0:min(128, M - 128 * t)], moving=x_t, accumulate=False)
        for k1 in range(1, (K + 128 - 1) // 128):
            x_t1 = nl.ndarray((min(128, K - 128 * k1), 1), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=x_t1, src=x[128 * k1:128 * k1 + min(128, K - 128 * k1)].reshape((min(128, K - 128 * k1), 1)))
            nisa.nc_matmul(dst=acc, stationary=A_T[0:min(128, K - 128 * k1), k1, 0:min(128, M - 128 * t)], moving=x_t1, accumulate=True)
        y_t = nl.ndarray((min(128, M - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=y_t, src=acc)
        nisa.dma_copy(dst=y[128 * t:128 * t + min(128, M - 128 * t)].reshape((min(128, M - 128 * t), 1)), src=y_t)
    return y
