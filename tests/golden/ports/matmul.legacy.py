# C2N2505: partition axis of 'C' is 'k' (contraction axis)
# C2N2510: 'C' accumulates in fp32 (PSUM) as the CUDA kernel did
# C2N2506: operand 'A' is loaded transposed (tensor-engine transpose through PSUM, once per row block, before the column blocks) because the contraction axis must be on partitions
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


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
        for k3 in nl.affine_range(0, (K + 127) // 128, 1):
            k3_n = min(128, K - 128 * k3)
            B_b1[0:k3_n, k3, 0:N_block_n] = nl.load(B[128 * k3:128 * k3 + k3_n, 0:N_block_n], dtype=nl.bfloat16)
        for w1 in nl.affine_range(0, (M + M_block - 1) // M_block, 1):
            w1_n = min(M_block, M - M_block * w1)
            A_T1 = nl.ndarray((128, (K + 127) // 128, w1_n), dtype=nl.bfloat16, buffer=nl.sbuf)
            for t3 in nl.affine_range(0, (w1_n + 127) // 128, 1):
                t3_n = min(128, w1_n - 128 * t3)
                A_rows1 = nl.ndarray((t3_n, K), dtype=nl.bfloat16, buffer=nl.sbuf)
                A_rows1[...] = nl.load(A[M_block * w1 + 128 * t3:M_block * w1 + 128 * t3 + t3_n, 0:K], dtype=nl.bfloat16)
                for k4 in nl.affine_range(0, (K + 127) // 128, 1):
                    k4_n = min(128, K - 128 * k4)
                    A_tp1 = nl.ndarray((k4_n, t3_n), dtype=nl.bfloat16, buffer=nl.psum)
                    A_tp1[...] = nisa.nc_transpose(A_rows1[0:t3_n, 128 * k4:128 * k4 + k4_n], dtype=nl.bfloat16)
                    A_T1[0:k4_n, k4, 128 * t3:128 * t3 + t3_n] = nisa.tensor_copy(A_tp1, dtype=nl.bfloat16)
            for t2 in nl.affine_range(0, (w1_n + 127) // 128, 1):
                t2_n = min(128, w1_n - 128 * t2)
                C_t1 = nl.ndarray((t2_n, N_block_n), dtype=nl.float32, buffer=nl.sbuf)
                for u1 in nl.affine_range(0, (N_block_n + 511) // 512, 1):
                    u1_n = min(512, N_block_n - 512 * u1)
                    acc1 = nl.ndarray((t2_n, u1_n), dtype=nl.float32, buffer=nl.psum)
                    acc1[...] = nisa.nc_matmul(A_T1[0:min(128, K), 0, 128 * t2:128 * t2 + t2_n], B_b1[0:min(128, K), 0, 512 * u1:512 * u1 + u1_n])
                    for k5 in nl.sequential_range(1, (K + 127) // 128, 1):
                        k5_n = min(128, K - 128 * k5)
                        acc1[...] += nisa.nc_matmul(A_T1[0:k5_n, k5, 128 * t2:128 * t2 + t2_n], B_b1[0:k5_n, k5, 512 * u1:512 * u1 + u1_n])
                    C_t1[0:t2_n, 512 * u1:512 * u1 + u1_n] = nisa.tensor_copy(acc1, dtype=nl.float32)
                nl.store(C[M_block * w1 + 128 * t2:M_block * w1 + 128 * t2 + t2_n, 0:N_block_n], value=C_t1)
    if ((N + N_block - 1) // N_block) != 1:
        for w in nl.affine_range(0, (M + M_block - 1) // M_block, 1):
            w_n = min(M_block, M - M_block * w)
            A_T = nl.ndarray((128, (K + 127) // 128, w_n), dtype=nl.bfloat16, buffer=nl.sbuf)
            for t1 in nl.affine_range(0, (w_n + 127) // 128, 1):
                t1_n = min(128, w_n - 128 * t1)
                A_rows = nl.ndarray((t1_n, K), dtype=nl.bfloat16, buffer=nl.sbuf)
                A_rows[...] = nl.load(A[M_block * w + 128 * t1:M_block * w + 128 * t1 + t1_n, 0:K], dtype=nl.bfloat16)
                for k1 in nl.affine_range(0, (K + 127) // 128, 1):
                    k1_n = min(128, K - 128 * k1)
                    A_tp = nl.ndarray((k1_n, t1_n), dtype=nl.bfloat16, buffer=nl.psum)
                    A_tp[...] = nisa.nc_transpose(A_rows[0:t1_n, 128 * k1:128 * k1 + k1_n], dtype=nl.bfloat16)
                    A_T[0:k1_n, k1, 128 * t1:128 * t1 + t1_n] = nisa.tensor_copy(A_tp, dtype=nl.bfloat16)
            for v in nl.affine_range(0, (N + N_block - 1) // N_block, 1):
                v_n = min(N_block, N - N_block * v)
                B_b = nl.ndarray((128, (K + 127) // 128, v_n), dtype=nl.bfloat16, buffer=nl.sbuf)
                for k in nl.affine_range(0, (K + 127) // 128, 1):
                    k_n = min(128, K - 128 * k)
                    B_b[0:k_n, k, 0:v_n] = nl.load(B[128 * k:128 * k + k_n, N_block * v:N_block * v + v_n], dtype=nl.bfloat16)
                for t in nl.affine_range(0, (w_n + 127) // 128, 1):
                    t_n = min(128, w_n - 128 * t)
                    C_t = nl.ndarray((t_n, v_n), dtype=nl.float32, buffer=nl.sbuf)
                    for u in nl.affine_range(0, (v_n + 511) // 512, 1):
                        u_n = min(512, v_n - 512 * u)
                        acc = nl.ndarray((t_n, u_n), dtype=nl.float32, buffer=nl.psum)
                        acc[...] = nisa.nc_matmul(A_T[0:min(128, K), 0, 128 * t:128 * t + t_n], B_b[0:min(128, K), 0, 512 * u:512 * u + u_n])
                        for k2 in nl.sequential_range(1, (K + 127) // 128, 1):
                            k2_n = min(128, K - 128 * k2)
                            acc[...] += nisa.nc_matmul(A_T[0:k2_n, k2, 128 * t:128 * t + t_n], B_b[0:k2_n, k2, 512 * u:512 * u + u_n])
                        C_t[0:t_n, 512 * u:512 * u + u_n] = nisa.tensor_copy(acc, dtype=nl.float32)
                    nl.store(C[M_block * w + 128 * t:M_block * w + 128 * t + t_n, N_block * v:N_block * v + v_n], value=C_t)
    return C
