"""Reference for col_sum_lockstep (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    return {"sums": inputs["m"].astype(np.float64).sum(axis=0).astype(np.float32)}
