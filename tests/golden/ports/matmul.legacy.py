# C2N2505: partition axis of 'C' is 'k' (contraction axis)
# C2N2510: 'C' accumulates in fp32 (PSUM) as the CUDA kernel did
# C2N2506: operand 'A' is loaded transposed (tensor-engine transpose through PSUM) because the contraction axis must be on partitions
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def matmul(A, B):
    M = A.shape[0]
    K = A.shape[1]
    N = B.shape[1]
    C = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for t in nl.affine_range(0, (M + 127) // 128, 1):
        t_n = min(128, M - 128 * t)
        A_T = nl.ndarray((128, (K + 127) // 128, t_n), dtype=nl.bfloat16, buffer=nl.sbuf)
        for k in nl.affine_range(0, (K + 127) // 128, 1):
            k_n = min(128, K - 128 * k)
            A_t = nl.ndarray((t_n, k_n), dtype=nl.bfloat16, buffer=nl.sbuf)
            A_t[...] = nl.load(A[128 * t:128 * t + t_n, 128 * k:128 * k + k_n], dtype=nl.bfloat16)
            A_tp = nl.ndarray((k_n, t_n), dtype=nl.bfloat16, buffer=nl.psum)
            A_tp[...] = nisa.nc_transpose(A_t, dtype=nl.bfloat16)
            A_T[0:k_n, k, 0:t_n] = nisa.tensor_copy(A_tp, dtype=nl.bfloat16)
        for u in nl.affine_range(0, (N + 511) // 512, 1):
            u_n = min(512, N - 512 * u)
            acc = nl.ndarray((t_n, u_n), dtype=nl.float32, buffer=nl.psum)
            B_t = nl.ndarray((min(128, K), u_n), dtype=nl.bfloat16, buffer=nl.sbuf)
            B_t[...] = nl.load(B[0:min(128, K), 512 * u:512 * u + u_n], dtype=nl.bfloat16)
            acc[...] = nisa.nc_matmul(A_T[0:min(128, K), 0, 0:t_n], B_t)
            for k1 in nl.sequential_range(1, (K + 127) // 128, 1):
                k1_n = min(128, K - 128 * k1)
                B_t1 = nl.ndarray((k1_n, u_n), dtype=nl.bfloat16, buffer=nl.sbuf)
                B_t1[...] = nl.load(B[128 * k1:128 * k1 + k1_n, 512 * u:512 * u + u_n], dtype=nl.bfloat16)
                acc[...] += nisa.nc_matmul(A_T[0:k1_n, k1, 0:t_n], B_t1)
            C_t = nl.ndarray((t_n, u_n), dtype=nl.float32, buffer=nl.sbuf)
            C_t[...] = nisa.tensor_copy(acc, dtype=nl.float32)
            nl.store(C[128 * t:128 * t + t_n, 512 * u:512 * u + u_n], value=C_t)
    return C
