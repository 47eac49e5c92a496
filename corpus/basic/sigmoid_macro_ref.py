"""Reference for sigmoid_kernel (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["src"].astype(np.float64)
    return {"dst": (1.0 / (1.0 + np.exp(-x))).astype(np.float32)}
