"""NKI port of encoder_forward: out[b, t, :] = wte[inp[b, t], :] + wpe[t, :]. Token ids of up to
128 positions go to partitions, the wte rows come in with one indirect (per-partition row) DMA,
the positional rows are loaded once per position tile and reused for every batch row."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def encoder_forward(inp, wte, wpe):
    B, T = inp.shape
    V, C = wte.shape
    P = nl.tile_size.pmax
    NT = (T + P - 1) // P
    out = nl.ndarray((B, T, C), dtype=wte.dtype, buffer=nl.shared_hbm)
    pos = nl.ndarray((P, NT, C), dtype=wpe.dtype, buffer=nl.sbuf)
    for j in range(NT):
        t0 = j * P
        nt = min(P, T - t0)
        nisa.dma_copy(dst=pos[0:nt, j, :], src=wpe[t0 : t0 + nt, :])
    for b in range(B):
        ids_b = inp[b, :].reshape((T, 1))
        for j in range(NT):
            t0 = j * P
            nt = min(P, T - t0)
            idx = nl.ndarray((nt, 1), dtype=nl.int32, buffer=nl.sbuf)
            nisa.dma_copy(dst=idx, src=ids_b[t0 : t0 + nt, :])
            emb = nl.ndarray((nt, C), dtype=wte.dtype, buffer=nl.sbuf)
            nisa.dma_copy(
                dst=emb,
                src=wte.ap(pattern=[[C, nt], [1, C]], offset=0, vector_offset=idx, indirect_dim=0),
            )
            res = nl.ndarray((nt, C), dtype=wte.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=res, data1=emb, data2=pos[0:nt, j, :], op=nl.add)
            nisa.dma_copy(dst=out[b, t0 : t0 + nt, :], src=res)
    return out
