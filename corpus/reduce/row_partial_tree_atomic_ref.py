"""Reference for row_partial_tree_atomic (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["in"].astype(np.float64)
    s = (x * x).sum(axis=1)
    return {"sumsq": (inputs["sumsq"].astype(np.float64) + s).astype(np.float32)}
