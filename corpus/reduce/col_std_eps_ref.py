"""Reference for col_std_eps (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["data"].astype(np.float64)
    mu = inputs["mean"].astype(np.float64)
    s = np.sqrt(((x - mu[None, :]) ** 2).sum(axis=0) / float(np.float32(3214212.01)))
    s = np.where(s <= float(np.float32(0.005)), 1.0, s)
    return {"std": s.astype(np.float32)}
