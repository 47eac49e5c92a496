import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def transpose(A):
    M = A.shape[0]
    N = A.shape[1]
    B = nl.ndarray((N, M), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(N)[None, :]
    i_f1 = nl.arange(128)[None, :]
    i_f2 = nl.arange(512)[None, :]
    for g in nl.affine_range(0, (M + 511) // 512, 1):
        A_t = nl.ndarray((128, (min(512, M - 512 * g) + 127) // 128 * N), dtype=nl.float32, buffer=nl.sbuf)
        for t in nl.affine_range(0, (min(512, M - 512 * g) + 127) // 128, 1):
            A_t[i_p, N * t + i_f] = nl.load(A[512 * g + 128 * t + i_p, i_f], dtype=nl.float32, mask=(i_p < min(512, M - 512 * g) - 128 * t))
        for u in nl.affine_range(0, (N + 127) // 128, 1):
            A_tp = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
            for t in nl.affine_range(0, (min(512, M - 512 * g) + 127) // 128, 1):
                A_tp[i_p, 128 * t + i_f1] = nisa.nc_transpose(A_t[i_p, N * t + 128 * u + i_f1], dtype=nl.float32)
            B_t = nisa.tensor_copy(A_tp[i_p, i_f2], dtype=nl.float32, mask=(i_p < N - 128 * u) & (i_f2 < M - 512 * g))
            del A_tp
            nl.store(B[128 * u + i_p, 512 * g + i_f2], value=B_t[i_p, i_f2], mask=(i_p < N - 128 * u) & (i_f2 < M - 512 * g))
            del B_t
        del A_t
    return B
