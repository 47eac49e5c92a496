"""Reference for dot_double: per-512-chunk dot products in float64."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    p = inputs["u"].astype(np.float64) * inputs["v"].astype(np.float64)
    n = p.shape[0]
    nb = -(-n // 512)
    padded = np.zeros(nb * 512)
    padded[:n] = p
    return {"partial": padded.reshape(nb, 512).sum(axis=1)}
