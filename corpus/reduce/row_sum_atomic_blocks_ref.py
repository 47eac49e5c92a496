"""Reference for row_sum_atomic_blocks (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["x"].astype(np.float64)
    s = (x * inputs["w"].astype(np.float64)[:, None]).sum(axis=1)
    return {"out": (inputs["out"].astype(np.float64) + s).astype(np.float32)}
