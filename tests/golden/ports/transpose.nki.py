import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def transpose(A):
    M = A.shape[0]
    N = A.shape[1]
    B = nl.ndarray((N, M), dtype=nl.float32, buffer=nl.shared_hbm)
    for g in range((M + 511) // 512):
        g_n = min(128, M - 512 * g)
        g_n1 = min(512, M - 512 * g)
        A_t = nl.ndarray((g_n, (g_n1 + 127) // 128 * N), dtype=nl.float32, buffer=nl.sbuf)
        for t in range((g_n1 + 127) // 128):
            t_n = min(128, g_n1 - 128 * t)
            nisa.dma_copy(dst=A_t[0:t_n, N * t:N * t + N], src=A[512 * g + 128 * t:512 * g + 128 * t + t_n, 0:N])
        for u in range((N + 127) // 128):
            u_n = min(128, N - 128 * u)
            A_tp = nl.ndarray((u_n, g_n1), dtype=nl.float32, buffer=nl.psum)
            for t in range((g_n1 + 127) // 128):
                t_n = min(128, g_n1 - 128 * t)
                nisa.nc_transpose(dst=A_tp[0:u_n, 128 * t:128 * t + t_n], data=A_t[0:t_n, N * t + 128 * u:N * t + 128 * u + u_n])
            B_t = nl.ndarray((u_n, g_n1), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=B_t, src=A_tp)
            nisa.dma_copy(dst=B[128 * u:128 * u + u_n, 512 * g:512 * g + g_n1], src=B_t)
    return B
