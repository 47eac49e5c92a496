"""Reference for column_sum (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    m = inputs["mat"].astype(np.float64)
    return {"colsum": m.sum(axis=0).astype(np.float32)}
