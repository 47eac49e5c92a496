import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def transpose(A):
    M = A.shape[0]
    N = A.shape[1]
    B = nl.ndarray((N, M), dtype=nl.float32, buffer=nl.shared_hbm)
    for t in range((M + 127) // 128):
        t_n = min(128, M - 128 * t)
        for u in range((N + 127) // 128):
            u_n = min(128, N - 128 * u)
            A_t = nl.ndarray((t_n, u_n), dtype=nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=A_t, src=A[128 * t:128 * t + t_n, 128 * u:128 * u + u_n])
            A_tp = nl.ndarray((u_n, t_n), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_transpose(dst=A_tp, data=A_t)
            B_t = nl.ndarray((u_n, t_n), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=B_t, src=A_tp)
            nisa.dma_copy(dst=B[128 * u:128 * u + u_n, 128 * t:128 * t + t_n], src=B_t)
    return B
