"""Reference for row_sum_packed (float64 sums of the bf16 inputs)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["x"].astype(np.float64)
    return {"out": x.sum(axis=1).astype(np.float32)}
