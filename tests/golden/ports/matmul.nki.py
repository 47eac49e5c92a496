# C2N2505: partition axis of 'C' is 'k' (contraction axis)
# C2N2510: 'C' accumulates in fp32 (PSUM) as the CUDA kernel did
# C2N2506: operand 'A' is loaded transposed (tensor-engine transpose through PSUM, once per row block, before the column blocks) because the contraction axis must be on partitions
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul(A, B):
    M = A.shape[0]
    K = A.shape[1]
    N = B.shape[1]
    C = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    N_block = min(512 * ((N + 511) // 512), 512 * max(1, 128 // ((K + 127) // 128 * 2 + 4)))
    N_block_n = min(N_block, N)
    M_block = min(128 * ((M + 127) // 128), 128 * max(1, (163840 // ((K + 127) // 128 * 2) - N_block_n) // 128))
    if ((N + N_block - 1) // N_block) == 1:
        B_b1 = nl.ndarray((128, (K + 127) // 128, N_block_n), dtype=nl.bfloat16, buffer=nl.sbuf)
        for k3 in range((K + 127) // 128):
            k3_n = min(128, K - 128 * k3)
            nisa.dma_copy(dst=B_b1[0:k3_n, k3, 0:N_block_n], src=B[128 * k3:128 * k3 + k3_n, 0:N_block_n])
        for w1 in range((M + M_block - 1) // M_block):
            w1_n = min(M_block, M - M_block * w1)
            A_T1 = nl.ndarray((128, (K + 127) // 128, w1_n), dtype=nl.bfloat16, buffer=nl.sbuf)
            for t3 in range((w1_n + 127) // 128):
                t3_n = min(128, w1_n - 128 * t3)
                A_rows1 = nl.ndarray((t3_n, K), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=A_rows1, src=A[M_block * w1 + 128 * t3:M_block * w1 + 128 * t3 + t3_n, 0:K])
                for k4 in range((K + 127) // 128):
                    k4_n = min(128, K - 128 * k4)
                    A_tp1 = nl.ndarray((k4_n, t3_n), dtype=nl.bfloat16, buffer=nl.psum)
                    nisa.nc_transpose(dst=A_tp1, data=A_rows1[0:t3_n, 128 * k4:128 * k4 + k4_n])
                    nisa.tensor_copy(dst=A_T1[0:k4_n, k4, 128 * t3:128 * t3 + t3_n], src=A_tp1)
            for t2 in range((w1_n + 127) // 128):
                t2_n = min(128, w1_n - 128 * t2)
                C_t1 = nl.ndarray((t2_n, N_block_n), dtype=nl.float32, buffer=nl.sbuf)
                for u1 in range((N_block_n + 511) // 512):
                    u1_n = min(512, N_block_n - 512 * u1)
                    acc1 = nl.ndarray((t2_n, u1_n), dtype=nl.float32, buffer=nl.psum)
                    nisa.nc_matmul(dst=acc1, stationary=A_T1[0:min(128, K), 0, 128 * t2:128 * t2 + t2_n], moving=B_b1[0:min(128, K), 0, 512 * u1:512 * u1 + u1_n], accumulate=False)
                    for k5 in range(1, (K + 127) // 128):
                        k5_n = min(128, K - 128 * k5)
                        nisa.nc_matmul(dst=acc1, stationary=A_T1[0:k5_n, k5, 128 * t2:128 * t2 + t2_n], moving=B_b1[0:k5_n, k5, 512 * u1:512 * u1 + u1_n], accumulate=True)
                    nisa.tensor_copy(dst=C_t1[0:t2_n, 512 * u1:512 * u1 + u1_n], src=acc1)
                nisa.dma_copy(dst=C[M_block * w1 + 128 * t2:M_block * w1 + 128 * t2 + t2_n, 0:N_block_n], src=C_t1)
    if ((N + N_block - 1) // N_block) != 1:
        for w in range((M + M_block - 1) // M_block):
            w_n = min(M_block, M - M_block * w)
            A_T = nl.ndarray((128, (K + 127) // 128, w_n), dtype=nl.bfloat16, buffer=nl.sbuf)
            for t1 in range((w_n + 127) // 128):
                t1_n = min(128, w_n - 128 * t1)
                A_rows = nl.ndarray((t1_n, K), dtype=nl.bfloat16, buffer=nl.sbuf)
                nisa.dma_copy(dst=A_rows, src=A[M_block * w + 128 * t1:M_block * w + 128 * t1 + t1_n, 0:K])
                for k1 in range((K + 127) // 128):
                    k1_n = min(128, K - 128 * k1)
                    A_tp = nl.ndarray((k1_n, t1_n), dtype=nl.bfloat16, buffer=nl.psum)
                    nisa.nc_transpose(dst=A_tp, data=A_rows[0:t1_n, 128 * k1:128 * k1 + k1_n])
                    nisa.tensor_copy(dst=A_T[0:k1_n, k1, 128 * t1:128 * t1 + t1_n], src=A_tp)
            for v in range((N + N_block - 1) // N_block):
                v_n = min(N_block, N - N_block * v)
                B_b = nl.ndarray((128, (K + 127) // 128, v_n), dtype=nl.bfloat16, buffer=nl.sbuf)
                for k in range((K + 127) // 128):
                    k_n = min(128, K - 128 * k)
                    nisa.dma_copy(dst=B_b[0:k_n, k, 0:v_n], src=B[128 * k:128 * k + k_n, N_block * v:N_block * v + v_n])
                for t in range((w_n + 127) // 128):
                    t_n = min(128, w_n - 128 * t)
                    C_t = nl.ndarray((t_n, v_n), dtype=nl.float32, buffer=nl.sbuf)
                    for u in range((v_n + 511) // 512):
                        u_n = min(512, v_n - 512 * u)
                        acc = nl.ndarray((t_n, u_n), dtype=nl.float32, buffer=nl.psum)
                        nisa.nc_matmul(dst=acc, stationary=A_T[0:min(128, K), 0, 128 * t:128 * t + t_n], moving=B_b[0:min(128, K), 0, 512 * u:512 * u + u_n], accumulate=False)
                        for k2 in range(1, (K + 127) // 128):
                            k2_n = min(128, K - 128 * k2)
                            nisa.nc_matmul(dst=acc, stationary=A_T[0:k2_n, k2, 128 * t:128 * t + t_n], moving=B_b[0:k2_n, k2, 512 * u:512 * u + u_n], accumulate=True)
                        nisa.tensor_copy(dst=C_t[0:t_n, 512 * u:512 * u + u_n], src=acc)
                    nisa.dma_copy(dst=C[M_block * w + 128 * t:M_block * w + 128 * t + t_n, N_block * v:N_block * v + v_n], src=C_t)
    return C
