"""Reference for row_sum_peeled_last (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    return {"sums": inputs["mat"].astype(np.float64).sum(axis=1).astype(np.float32)}
