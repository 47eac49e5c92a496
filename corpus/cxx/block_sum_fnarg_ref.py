"""Reference for block_sum_fnarg (float64 row sums)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    return {"out": inputs["x"].astype(np.float64).sum(axis=1).astype(np.float32)}
