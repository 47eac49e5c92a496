"""Reference for saxpy (float64, rounded to float32 at the end)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["x"].astype(np.float64)
    y = inputs["y"].astype(np.float64)
    alpha = float(scalars["alpha"])
    return {"y": (alpha * x + y).astype(np.float32)}
