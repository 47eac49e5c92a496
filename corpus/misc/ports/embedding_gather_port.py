"""NKI port of encoder_forward: out[b, t, :] = wte[inp[b, t], :] + wpe[t, :].

Tokens go to partitions and their wte rows come in with one indirect (per-partition row) DMA.
Short sequences (T <= 128) pack 128 // T whole batch rows into one tile, so the positional tile
is wpe repeated 128 // T times (one stride-0 DMA, loaded once); long sequences tile the positions
by 128 and keep every positional tile in SBUF across the batch."""

import nki
import nki.isa as nisa
import nki.language as nl


def _gather_add(out_rows, ids_rows, wte, pos_rows, nt, C):
    idx = nl.ndarray((nt, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=ids_rows)
    emb = nl.ndarray((nt, C), dtype=wte.dtype, buffer=nl.sbuf)
    nisa.dma_copy(
        dst=emb, src=wte.ap(pattern=[[C, nt], [1, C]], offset=0, vector_offset=idx, indirect_dim=0)
    )
    res = nl.ndarray((nt, C), dtype=wte.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=res, data1=emb, data2=pos_rows, op=nl.add)
    nisa.dma_copy(dst=out_rows, src=res)


@nki.jit
def encoder_forward(inp, wte, wpe):
    B, T = inp.shape
    V, C = wte.shape
    P = nl.tile_size.pmax
    out = nl.ndarray((B, T, C), dtype=wte.dtype, buffer=nl.shared_hbm)
    if T <= P:
        k = P // T  # whole batch rows per tile
        pos = nl.ndarray((k * T, C), dtype=wpe.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=pos, src=wpe.ap(pattern=[[0, k], [C, T], [1, C]], offset=0))
        for b0 in range(0, B, k):
            kb = min(k, B - b0)
            nt = kb * T
            _gather_add(
                out[b0 : b0 + kb, :, :].reshape((nt, C)),
                inp[b0 : b0 + kb, :].reshape((nt, 1)),
                wte,
                pos[0:nt, :],
                nt,
                C,
            )
        return out
    NT = (T + P - 1) // P
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
            _gather_add(out[b, t0 : t0 + nt, :], ids_b[t0 : t0 + nt, :], wte, pos[0:nt, j, :], nt, C)
    return out
