"""Reference for row_mean_late_alias (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["inp"].astype(np.float64)
    return {"out": (x - x.mean(axis=1, keepdims=True)).astype(np.float32)}
