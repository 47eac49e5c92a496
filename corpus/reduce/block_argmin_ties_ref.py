"""Reference for block_low: per block of 256 values, the minimum and its first global position."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    v = inputs["score"].astype(np.float32)
    n = v.shape[0]
    blocks = (n + 255) // 256
    low = np.empty(blocks, np.float32)
    at = np.empty(blocks, np.int32)
    for b in range(blocks):
        part = v[b * 256 : min(n, b * 256 + 256)]
        k = int(np.argmin(part))  # the first of equal minima
        low[b], at[b] = part[k], b * 256 + k
    return {"low": low, "low_at": at}
