"""Reference for reduce_unrolled: per-256-element chunk sums (float64 -> float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["g_idata"].astype(np.float64)
    n = x.shape[0]
    nb = -(-n // 256)
    padded = np.zeros(nb * 256)
    padded[:n] = x
    return {"g_odata": padded.reshape(nb, 256).sum(axis=1).astype(np.float32)}
