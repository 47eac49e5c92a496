# C2N2505: partition axis of 'C' is 'k' (contraction axis)
# C2N2510: 'C' accumulates in fp32 (PSUM) as the CUDA kernel did
# C2N2506: operand 'A' is loaded transposed (tensor-engine transpose through PSUM) because the contraction axis must be on partitions
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul(A, B):
    M = A.shape[0]
    K = A.shape[1]
    N = B.shape[1]
    C = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for t in range((M + 127) // 128):
        t_n = min(128, M - 128 * t)
        A_T = nl.ndarray((128, (K + 127) // 128, t_n), dtype=nl.bfloat16, buffer=nl.sbuf)
        for k in range((K + 127) // 128):
            k_n = min(128, K - 128 * k)
            A_t = nl.ndarray((t_n, k_n), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.dma_copy(dst=A_t, src=A[128 * t:128 * t + t_n, 128 * k:128 * k + k_n])
            A_tp = nl.ndarray((k_n, t_n), dtype=nl.bfloat16, buffer=nl.psum)
            nisa.nc_transpose(dst=A_tp, data=A_t)
            nisa.tensor_copy(dst=A_T[0:k_n, k, 0:t_n], src=A_tp)
        for u in range((N + 511) // 512):
            u_n = min(512, N - 512 * u)
            acc = nl.ndarray((t_n, u_n), dtype=nl.float32, buffer=nl.psum)
            B_t = nl.ndarray((min(128, K), u_n), dtype=nl.bfloat16, buffer=nl.sbuf)
            nisa.dma_copy(dst=B_t, src=B[0:min(128, K), 512 * u:512 * u + u_n])
            nisa.nc_matmul(dst=acc, stationary=A_T[0:min(128, K), 0, 0:t_n], moving=B_t, accumulate=False)
            for k1 in range(1, (K + 127) // 128):
                k1_n = min(128, K - 128 * k1)
                B_t1 = nl.ndarray((k1_n, u_n), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=B_t1, src=B[128 * k1:128 * k1 + k1_n, 512 * u:512 * u + u_n])
                nisa.nc_matmul(dst=acc, stationary=A_T[0:k1_n, k1, 0:t_n], moving=B_t1, accumulate=True)
            C_t = nl.ndarray((t_n, u_n), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=C_t, src=acc)
            nisa.dma_copy(dst=C[128 * t:128 * t + t_n, 512 * u:512 * u + u_n], src=C_t)
    return C
