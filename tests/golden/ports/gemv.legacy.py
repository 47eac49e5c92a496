# C2N2505: partition axis of 'y' is 'k' (contraction axis)
# C2N2510: 'y' accumulates in fp32 (PSUM) as the CUDA kernel did
# C2N2506: operand 'A' is loaded transposed (tensor-engine transpose through PSUM) because the contraction axis must be on partitions
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def gemv(A, x):
    M = A.shape[0]
    K = A.shape[1]
    y = nl.ndarray((M,), dtype=nl.float32, buffer=nl.shared_hbm)
    x_t = nl.ndarray((min(128, K - 0), 1), dtype=nl.float32, buffer=nl.sbuf)
    x_t[...] = nl.load(x[0:min(128, K - 0)].reshape((min(128, K - 0), 1)))
    for t in nl.affine_range(0, (M + 128 - 1) // 128, 1):
        A_T = nl.ndarray((128, (K + 128 - 1) // 128, min(128, M - 128 * t)), dtype=nl.float32, buffer=nl.sbuf)
        for k in nl.affine_range(0, (K + 128 - 1) // 128, 1):
            A_t = nl.ndarray((min(128, M - 128 * t), min(128, K - 128 * k)), dtype=nl.float32, buffer=nl.sbuf)
            A_t[...] = nl.load(A[128 * t:128 * t + min(128, M - 128 * t), 128 * k:128 * k + min(128, K - 128 * k)])
            A_tp = nl.ndarray((min(128, K - 128 * k), min(128, M - 128 * t)), dtype=nl.float32, buffer=nl.psum)
            A_tp[...] = nisa.nc_transpose(A_t)
            A_T[0:min(128, K - 128 * k), k, 0:min(128, M - 128 * t)] = nisa.tensor_copy(A_tp)
        acc = nl.ndarray((min(128, M - 128 * t), 1), dtype=nl.float32, buffer=nl.psum)
        acc[...] = nisa.nc_matmul(A_T[0:min(128, K - 0), 0, 0:min(128, M - 128 * t)], x_t)
        for k1 in nl.sequential_range(1, (K + 128 - 1) // 128, 1):
            x_t1 = nl.ndarray((min(128, K - 128 * k1), 1), dtype=nl.float32, buffer=nl.sbuf)
            x_t1[...] = nl.load(x[128 * k1:128 * k1 + min(128, K - 128 * k1)].reshape((min(128, K - 128 * k1), 1)))
            acc[...] += nisa.nc_matmul(A_T[0:min(128, K - 128 * k1), k1, 0:min(128, M - 128 * t)], x_t1)
        y_t = nl.ndarray((min(128, M - 128 * t), 1), dtype=nl.float32, buffer=nl.sbuf)
        y_t[...] = nisa.tensor_copy(acc)
        nl.store(y[128 * t:128 * t + min(128, M - 128 * t)].reshape((min(128, M - 128 * t), 1)), value=y_t)
    return y
