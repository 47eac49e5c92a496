"""Reference for scan_hillis_steele: inclusive cumsum within 256-element chunks (float64 -> float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["in"].astype(np.float64)
    out = np.empty_like(x)
    for start in range(0, x.shape[0], 256):
        out[start : start + 256] = np.cumsum(x[start : start + 256])
    return {"out": out.astype(np.float32)}
