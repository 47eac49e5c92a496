"""Reference for col_var_gridstride (float64, rounded to float32)."""

import numpy as np


def reference(
    inputs: dict[str, np.ndarray], scalars: dict[str, int | float]
) -> dict[str, np.ndarray]:
    x = inputs["x"].astype(np.float64)
    mu = inputs["mu"].astype(np.float64)
    rows = x.shape[0]
    v = ((x - mu[None, :]) ** 2).sum(axis=0) / (rows - 1)
    return {"var": v.astype(np.float32)}
