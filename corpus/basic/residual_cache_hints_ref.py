"""Reference for residual_gain (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    g = 2.0 * inputs["gain"].astype(np.float64)[None, :]
    out = inputs["inp1"].astype(np.float64) + 0.5 * g * inputs["inp2"].astype(np.float64)
    return {"out": out.astype(np.float32)}
