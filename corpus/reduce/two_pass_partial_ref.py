"""Reference for partial_sums: per-1024-element chunk sums (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["x"].astype(np.float64)
    n = x.shape[0]
    nb = -(-n // 1024)
    padded = np.zeros(nb * 1024, dtype=np.float64)
    padded[:n] = x
    return {"partials": padded.reshape(nb, 1024).sum(axis=1).astype(np.float32)}
