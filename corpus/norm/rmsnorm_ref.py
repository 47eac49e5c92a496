"""Reference for rmsnorm_forward (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["x"].astype(np.float64)
    w = inputs["w"].astype(np.float64)
    scale = 1.0 / np.sqrt((x * x).mean(axis=1) + float(scalars["eps"]))
    return {"y": (x * scale[:, None] * w[None, :]).astype(np.float32)}
