"""Reference for col_sum_atomic_grid (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    s = inputs["dout"].astype(np.float64).sum(axis=0)
    return {"dbias": (inputs["dbias"].astype(np.float64) + s).astype(np.float32)}
