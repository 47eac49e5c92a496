import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def transpose(A):
    M = A.shape[0]
    N = A.shape[1]
    B = nl.ndarray((N, M), dtype=nl.float32, buffer=nl.shared_hbm)
    for t in nl.affine_range(0, (M + 128 - 1) // 128, 1):
        for u in nl.affine_range(0, (N + 128 - 1) // 128, 1):
            A_t = nl.ndarray((min(128, M - 128 * t), min(128, N - 128 * u)), dtype=nl.float32, buffer=nl.sbuf)
            A_t[...] = nl.load(A[128 * t:128 * t + min(128, M - 128 * t), 128 * u:128 * u + min(128, N - 128 * u)])
            A_tp = nl.ndarray((min(128, N - 128 * u), min(128, M - 128 * t)), dtype=nl.float32, buffer=nl.psum)
            A_tp[...] = nisa.nc_transpose(A_t)
            B_t = nl.ndarray((min(128, N - 128 * u), min(128, M - 128 * t)), dtype=nl.float32, buffer=nl.sbuf)
            B_t[...] = nisa.tensor_copy(A_tp)
            nl.store(B[128 * u:128 * u + min(128, N - 128 * u), 128 * t:128 * t + min(128, M - 128 * t)], value=B_t)
    return B
