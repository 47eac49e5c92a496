"""Reference for block_best: per block of 128 values, the maximum and its global position (on
equal values every step of the shared tree keeps the lower half's: the tied position whose
bit-reversed offset in the block is least wins)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    v = inputs["vals"].astype(np.float32)
    n = v.shape[0]
    blocks = (n + 127) // 128
    best = np.empty(blocks, np.float32)
    at = np.empty(blocks, np.int32)
    for b in range(blocks):
        pool = np.full(128, -np.inf, np.float32)
        where = np.full(128, -1, np.int64)
        lo, hi = b * 128, min(n, b * 128 + 128)
        pool[: hi - lo] = v[lo:hi]
        where[: hi - lo] = np.arange(lo, hi)
        s = 64
        while s > 0:
            take = pool[s : 2 * s] > pool[:s]
            pool[:s] = np.where(take, pool[s : 2 * s], pool[:s])
            where[:s] = np.where(take, where[s : 2 * s], where[:s])
            s //= 2
        best[b], at[b] = pool[0], where[0]
    return {"best": best, "best_at": at}
