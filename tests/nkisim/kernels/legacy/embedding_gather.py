"""Embedding lookup (beta-1 API): token ids loaded to partitions, then an indirect row load."""

import neuronxcc.nki.language as nl
from neuronxcc import nki


@nki.jit
def embedding_gather_kernel(table, ids):
    V, D = table.shape
    (T,) = ids.shape
    out = nl.ndarray((T, D), dtype=table.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_d = nl.arange(D)[None, :]
    for t in nl.affine_range((T + 127) // 128):
        rows = t * 128 + i_p
        idx = nl.load(ids[rows], mask=(rows < T))
        emb = nl.load(table[idx[i_p, 0], i_d], mask=(rows < T))
        nl.store(out[rows, i_d], value=emb, mask=(rows < T))
    return out
