"""SwiGLU-style gate: out = silu(gate) * up."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def silu_mul_kernel(gate, up):
    M, N = gate.shape
    P = nl.tile_size.pmax
    F = 1024
    out = nl.ndarray((M, N), dtype=gate.dtype, buffer=nl.shared_hbm)
    for m in range(0, M, P):
        rows = min(P, M - m)
        for n in range(0, N, F):
            cols = min(F, N - n)
            g_t = nl.ndarray((rows, cols), dtype=gate.dtype, buffer=nl.sbuf)
            u_t = nl.ndarray((rows, cols), dtype=up.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=g_t, src=gate[m : m + rows, n : n + cols])
            nisa.dma_copy(dst=u_t, src=up[m : m + rows, n : n + cols])
            s_t = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.sbuf)
            nisa.activation(dst=s_t, op=nl.silu, data=g_t)
            o_t = nl.ndarray((rows, cols), dtype=gate.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=o_t, data1=s_t, data2=u_t, op=nl.multiply)
            nisa.dma_copy(dst=out[m : m + rows, n : n + cols], src=o_t)
    return out
