# C2N2505: partition axis of 'y' is 'i' (parallel axis)
# C2N2510: 'y' accumulates in fp32 (SBUF) as the CUDA kernel did
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def gemv(A, x):
    M = A.shape[0]
    K = A.shape[1]
    y = nl.ndarray((M,), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(K)[None, :]
    i_f1 = nl.arange(1)[None, :]
    x_t = nl.load(x[i_f + 0 * i_p], dtype=nl.float32, mask=(i_p < M))
    for t in nl.affine_range(0, (M + 127) // 128, 1):
        A_t = nl.load(A[128 * t + i_p, i_f], dtype=nl.float32, mask=(i_p < M - 128 * t))
        mul = nisa.tensor_tensor(A_t[i_p, i_f], x_t[i_p, i_f], op=nl.multiply, dtype=nl.float32, mask=(i_p < M - 128 * t))
        del A_t
        red = nisa.tensor_reduce(nl.add, mul[i_p, i_f], axis=1, dtype=nl.float32, mask=(i_p < M - 128 * t))
        del mul
        # cuda2nki: ignore[C2N5007] one result per row: each float32 element of 'y' is computed from a row of 'A' (K values) reduced on one partition, and every output of the kernel is one such result per row, so each tile of up to 128 rows stores 4 B per partition
        nl.store(y[128 * t + i_p], value=red[i_p, i_f1], mask=(i_p < M - 128 * t))
        del red
    return y
