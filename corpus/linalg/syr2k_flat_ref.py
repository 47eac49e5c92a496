"""Reference for syr2k_flat (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    a = inputs["a"].astype(np.float64)
    b = inputs["b"].astype(np.float64)
    c = inputs["c"].astype(np.float64)
    out = scalars["alpha"] * (a @ b.T + b @ a.T) + scalars["beta"] * c
    return {"c": out.astype(np.float32)}
