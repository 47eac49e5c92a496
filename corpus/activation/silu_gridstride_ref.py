"""Reference for silu_gridstride (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["x"].astype(np.float64)
    return {"y": (x / (1.0 + np.exp(-x))).astype(np.float32)}
