"""Reference for warp_vote_stats: per 32-element warp, the sum, positives and flags."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["values"].astype(np.float32)
    n = int(scalars["length"])
    warps = -(-n // 32)
    sums = np.zeros(warps, np.float32)
    pos = np.zeros(warps, np.int32)
    flags = np.zeros(warps, np.int32)
    for w in range(warps):
        part = x[w * 32 : min(n, w * 32 + 32)]
        sums[w] = np.float32(np.sum(part.astype(np.float64)))
        pos[w] = int(np.sum(part > 0))
        flags[w] = int(np.any(part > 2.5)) + 2 * int(np.all(np.abs(part) < 2.9))
    return {"warp_sum": sums, "positives": pos, "flags": flags}
