import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def transpose(A):
    M = A.shape[0]
    N = A.shape[1]
    B = nl.ndarray((N, M), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(128)[None, :]
    for t in nl.affine_range(0, (M + 127) // 128, 1):
        for u in nl.affine_range(0, (N + 127) // 128, 1):
            A_t = nl.load(A[128 * t + i_p, 128 * u + i_f], dtype=nl.float32, mask=(i_p < M - 128 * t) & (i_f < N - 128 * u))
            A_tp = nisa.nc_transpose(A_t[i_p, i_f], dtype=nl.float32)
            del A_t
            B_t = nisa.tensor_copy(A_tp[i_p, i_f], dtype=nl.float32, mask=(i_p < N - 128 * u) & (i_f < M - 128 * t))
            del A_tp
            nl.store(B[128 * u + i_p, 128 * t + i_f], value=B_t[i_p, i_f], mask=(i_p < N - 128 * u) & (i_f < M - 128 * t))
            del B_t
    return B
