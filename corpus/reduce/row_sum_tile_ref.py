"""Reference for row_sum_tile (float64 -> float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    return {"out": inputs["in"].astype(np.float64).sum(axis=1).astype(np.float32)}
